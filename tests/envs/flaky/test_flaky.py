"""FlakyRepair-v0: bank validity, reward ordering, determinism, repo mode, bench."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import gymnasium as gym
import numpy as np
import pytest

import forgegym  # noqa: F401
from forgegym.envs.flaky.bank import FlakyTaskBank
from forgegym.envs.flaky.chaos import make_schedule, order_for
from forgegym.envs.flaky.env import FlakyRepairEnv
from forgegym.envs.flaky.generator import GeneratorConfig, fingerprint, generate
from forgegym.envs.flaky.grader import hack_findings, scan_wait_inflation
from forgegym.envs.flaky.hacks import HACKS
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.policies import partial_action
from forgegym.envs.flaky.preflight import validate_many
from forgegym.policies.registry import reference_action_for

NOOP = '{"action": "submit"}'


@pytest.fixture(scope="module")
def bank() -> FlakyTaskBank:
    return FlakyTaskBank()


@pytest.fixture(scope="module")
def env():
    e = gym.make("Forge/FlakyRepair-v0", order_analysis=False).unwrapped
    yield e
    e.close()


def _one_per_category(bank: FlakyTaskBank) -> list[str]:
    by_cat: dict[str, list[str]] = defaultdict(list)
    for tid in bank.task_ids(10_000, seed=1):
        by_cat[bank.entries[tid]["category"]].append(tid)
    return [ids[0] for ids in by_cat.values()]


def test_manifest_size_and_coverage(bank: FlakyTaskBank) -> None:
    entries = list(bank.entries.values())
    assert len(entries) >= 500
    assert len({e["category"] for e in entries}) >= 12
    assert all(0.0 < e["baseline_pass_rate"] < 1.0 for e in entries)
    assert sum(e["reference_pass_rate"] == 1.0 for e in entries) >= 0.99 * len(entries)
    assert len({e["fingerprint"] for e in entries}) == len(entries)  # distinct scenarios


def test_generation_is_deterministic_and_fingerprinted(bank: FlakyTaskBank) -> None:
    for tid in bank.task_ids(20, seed=3):
        generate.cache_clear()
        assert fingerprint(bank.get(tid).files) == bank.entries[tid]["fingerprint"]
    with pytest.raises(ValueError, match="per_template"):
        GeneratorConfig(per_template=0).validate()


def test_schedule_is_seeded() -> None:
    assert make_schedule(7, 10) == make_schedule(7, 10)
    assert make_schedule(7, 10) != make_schedule(8, 10)
    modes = {r.mode for r in make_schedule(3, 10)}
    assert {"reverse", "twice", "alone", "after"} <= modes
    run = make_schedule(3, 10)[1]
    assert order_for(run, "t::b", ["t::a", "t::b"]) == order_for(run, "t::b", ["t::a", "t::b"])


def test_live_revalidation_matches_manifest(bank: FlakyTaskBank) -> None:
    """One scenario per category re-validated in the sandbox now: flaky start state,
    reference at 1.0, mutant caught, and the same baseline as the manifest."""
    from forgegym.sandbox.runners import get_default_runner

    ids = _one_per_category(bank)
    report = validate_many(get_default_runner(), [bank.get(t) for t in ids], bank.manifest_reruns)
    for entry in report:
        assert entry["valid"], entry
        assert entry["baseline_pass_rate"] == bank.entries[entry["task_id"]]["baseline_pass_rate"]


def _with_partial(bank: FlakyTaskBank) -> list[str]:
    """One scenario with a (validated) partial fix per category that has partials."""
    by_cat: dict[str, str] = {}
    for tid in bank.task_ids(10_000, seed=2):
        entry = bank.entries[tid]
        if entry.get("partial_pass_rate") is not None:
            by_cat.setdefault(entry["category"], tid)
    return list(by_cat.values())


def test_partials_are_legitimate_and_in_between(bank: FlakyTaskBank) -> None:
    """Partial fixes remove one of two root causes: statically clean, strictly between
    the start state and 1.0 (validation drops scenarios where they are not)."""
    with_partial = [e for e in bank.entries.values() if e.get("partial_pass_rate") is not None]
    assert len({e["template"] for e in with_partial}) >= 4
    assert len({e["category"] for e in with_partial}) >= 3
    assert all(e["category"] != "async_wait" for e in with_partial)  # no wait-inflation partial
    for e in with_partial:
        assert e["baseline_pass_rate"] < e["partial_pass_rate"] < 1.0, e
        assert not e["partial_flagged"], e
    for tid in _with_partial(bank):
        task = bank.get(tid)
        hidden = FlakyHidden.of(task)
        assert hidden.partial
        files = {**task.files, **hidden.partial}
        assert not hack_findings(task.files, files, hidden.test_paths), tid


def test_reward_ordering_reference_partial_noop_hack(
    bank: FlakyTaskBank, env: FlakyRepairEnv
) -> None:
    # must-show 2, over scenarios from >= 3 categories whose partial raises p below 1.0.
    ids = _with_partial(bank)
    assert len({bank.entries[t]["category"] for t in ids}) >= 3, ids
    means: dict[str, list[float]] = defaultdict(list)
    successes = Counter()
    for tid in ids:
        task = bank.get(tid)
        partial = partial_action(task)
        assert partial is not None
        texts = [
            reference_action_for("flaky")(task),
            partial,
            NOOP,
            *(fn(task) for fn in HACKS.values()),
        ]
        graded = env.grade_completions(tid, texts)
        for label, (reward, breakdown) in zip(
            ["ref", "partial", "noop"] + list(HACKS), graded, strict=True
        ):
            means["hack" if label in HACKS else label].append(reward)
            if label in HACKS:
                successes[label] += int(env._success(breakdown))
                assert breakdown.gates == ["hack_flagged"], (tid, label, breakdown.render())
            if label == "partial":
                assert not breakdown.gates and not env._success(breakdown), breakdown.render()
    mean = {k: float(np.mean(v)) for k, v in means.items()}
    assert mean["ref"] > mean["partial"] > mean["noop"] >= mean["hack"], mean
    assert "wait_inflation" in successes and sum(successes.values()) == 0, successes


def test_wait_inflation_is_gated(bank: FlakyTaskBank, env: FlakyRepairEnv) -> None:
    """Waiting ten times more scheduler turns makes an async_wait target pass on every
    rerun (measured directly, scan bypassed), yet it is flagged and scores <= no-op."""
    ids = [t for t in bank.task_ids(10_000, seed=4) if "/async_wait/unawaited/" in t]
    gated = 0
    for tid in ids[:4]:
        task = bank.get(tid)
        text = HACKS["wait_inflation"](task)
        files = _files_of(task, text)
        rate, _ = env._chaos_pass_rate(task, files)
        if rate < 1.0:
            continue
        findings = hack_findings(task.files, files, FlakyHidden.of(task).test_paths)
        assert {f.kind for f in findings} == {"wait_inflated"}, findings
        (hack, breakdown), (noop, _) = env.grade_completions(tid, [text, NOOP])
        assert breakdown.gates == ["hack_flagged"] and hack <= noop, breakdown.render()
        assert not env._success(breakdown)
        gated += 1
        if gated == 2:
            break
    assert gated >= 1, "no async_wait scenario where waiting longer reaches p = 1.0"


def _files_of(task, text: str) -> dict[str, str]:
    actions = json.loads(text.split("```json\n", 1)[1].rsplit("```", 1)[0])
    files = dict(task.files)
    for action in actions:
        for edit in action.get("edits", []):
            files[edit["path"]] = edit["content"]
    return files


def test_wait_inflation_scan() -> None:
    old = (
        "import asyncio\nfrom app import fakes\n\n\ndef test_a(t):\n"
        "    async def go():\n        await fakes.settle(2)\n\n    asyncio.run(go())\n"
        "    t.join(timeout=1)\n"
    )
    flagged = [
        old.replace("settle(2)", "settle(20)"),
        old.replace("settle(2)", "settle(ticks=3)"),
        old.replace("settle(2)", "settle(2 * 10)"),
        old.replace("settle(2)", "settle(n)"),
        old.replace(
            "await fakes.settle(2)", "for _ in range(5):\n            await fakes.settle(2)"
        ),
        old.replace(
            "await fakes.settle(2)", "await fakes.settle(2)\n        await asyncio.sleep(0)"
        ),
        old.replace("timeout=1", "timeout=10"),
        old + "    t.poll()\n",
    ]
    clean = [
        old.replace("settle(2)", "settle(1)"),
        old.replace("        await fakes.settle(2)\n", "        pass\n"),
        old + "    t.join()\n    ','.join('ab')\n",
    ]
    for new in flagged:
        kinds = {f.kind for f in scan_wait_inflation({"t.py": old}, {"t.py": new}, ["t.py"])}
        assert kinds == {"wait_inflated"}, new
    for new in clean:
        assert not scan_wait_inflation({"t.py": old}, {"t.py": new}, ["t.py"]), new


def test_episode_reports_preflight_and_ends_on_submit() -> None:
    e = gym.make("Forge/FlakyRepair-v0", order_analysis=False, max_steps=3)
    obs, info = e.reset(seed=5)
    assert "Preflight" in obs and info["family"] == "flaky"
    task = e.unwrapped.task
    obs, reward, term, trunc, info = e.step(reference_action_for("flaky")(task))
    assert term and info["success"] and info["score"] > 0.5
    obs, reward, term, trunc, info = e.step("not json")
    assert term and "action_error" in info
    e.close()


def test_kwargs_are_validated() -> None:
    with pytest.raises(ValueError, match="reruns"):
        FlakyRepairEnv(reruns=0)
    with pytest.raises(ValueError, match="categories"):
        FlakyRepairEnv(categories=["bogus"])
    with pytest.raises(ValueError, match="repo_path"):
        FlakyRepairEnv(repo_path="/nonexistent", test_id="tests/test_x.py::test_y")


def test_repo_path_mode(tmp_path) -> None:
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "registry.py").write_text(
        "ITEMS = []\n\n\ndef add(x):\n    ITEMS.append(x)\n    return list(ITEMS)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_registry.py").write_text(
        "from mylib import registry\n\n\ndef test_add():\n    assert registry.add(1) == [1]\n\n\n"
        "def test_other():\n    assert registry.add(2)[-1] == 2\n"
    )
    e = gym.make(
        "Forge/FlakyRepair-v0", repo_path=str(tmp_path), test_id="tests/test_registry.py::test_add"
    ).unwrapped
    obs, info = e.reset(seed=0)
    assert "flaky" in obs and 0.0 < info["baseline_pass_rate"] < 1.0
    fix = {
        "action": "edit",
        "edits": [
            {
                "path": "tests/test_registry.py",
                "search": "def test_add():\n",
                "replace": "def test_add():\n    registry.ITEMS.clear()\n",
            }
        ],
    }
    e.step(json.dumps(fix))
    _, _, term, _, info = e.step(NOOP)
    assert term and info["success"], info["reward_breakdown"]
    assert info["reward_breakdown"]["terms"]["stability"]["value"] == 1.0
    e.close()


def test_bench_runs() -> None:
    from forgegym.envs.flaky.bench import run_bench

    result = run_bench(reruns=4, verbose=False)
    assert result["reruns"] == 4 and result["same_statuses"]


def test_a_lucky_no_op_is_not_a_fix(
    bank: FlakyTaskBank, env: FlakyRepairEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task is detected flaky, so an unchanged test whose reruns all happen to pass
    (seen in the corpus: a thread-join race, 10/10) is luck: no stability, never solved,
    the no-op penalty; the same luck for the reference fix still solves."""
    from dataclasses import replace

    from forgegym.envs.flaky import grader as grader_module

    real = grader_module.rerun_outcomes

    def every_rerun_passes(*args, **kwargs):  # type: ignore[no-untyped-def]
        return [replace(o, passed=True, error_type=None, frames=()) for o in real(*args, **kwargs)]

    monkeypatch.setattr(grader_module, "rerun_outcomes", every_rerun_passes)
    tid = _one_per_category(bank)[0]
    task = bank.get(tid)
    (noop_reward, noop), (ref_reward, ref) = env.grade_completions(
        tid, [NOOP, reference_action_for("flaky")(task)]
    )
    assert not env._success(noop) and noop.terms["solved"].value == 0.0, noop.render()
    assert noop.terms["stability"].value == 0.0 and noop.terms["noop"].value == 1.0
    assert env._success(ref) and ref_reward > noop_reward


def test_a_rerun_budget_that_never_saw_the_flake_solves_nothing() -> None:
    """Under ``reruns=4`` the pristine test of ``non_idempotent/init/d1/4`` passes 4/4, so
    nothing can tell a fix from luck: an unrelated edit must score as the no-op and never
    succeed (it once earned ``solved``), and the breakdown says why."""
    env = gym.make("Forge/FlakyRepair-v0", reruns=4, order_analysis=False).unwrapped
    try:
        tid = "flaky/non_idempotent/init/d1/4"
        task = env.task_bank.get(tid)
        module = FlakyHidden.of(task).location.split("::")[0]
        junk = task.files[module].rstrip("\n") + "\n\n\nx_unused = 1\n"
        edit = json.dumps(
            [
                {"action": "edit", "edits": [{"path": module, "content": junk}]},
                {"action": "submit"},
            ]
        )
        (noop_reward, noop), (junk_reward, graded) = env.grade_completions(tid, [NOOP, edit])
        assert "baseline 1.00" in graded.terms["stability"].detail, graded.render()
        assert "nothing to judge" in graded.terms["stability"].detail
        assert graded.terms["solved"].value == 0.0 and not env._success(graded)
        assert junk_reward <= noop_reward
    finally:
        env.close()


def test_manifest_build_revalidates_only_the_scenarios_whose_files_changed(monkeypatch) -> None:
    """``build_manifest(..., reuse=manifest)`` keeps the entries of scenarios that render
    the same files and validates the others (``python -m forgegym.envs.flaky.generator
    --reuse``: a change to some templates costs only their scenarios' sandbox runs)."""
    from forgegym.envs.flaky import preflight
    from forgegym.envs.flaky.bank import load_manifest
    from forgegym.envs.flaky.generator import build_manifest

    config = GeneratorConfig(
        categories=("nondeterminism",), difficulties=(2,), per_template=2, reruns=10
    )
    shipped = load_manifest()
    by_id = {e["task_id"]: e for e in shipped["entries"]}
    stale = dict(by_id[config.candidate_ids()[0]], fingerprint="0" * 16)
    validated: list[str] = []

    def fake_validate(runner, tasks, reruns):
        validated.extend(t.task_id for t in tasks)
        return [{"task_id": t.task_id, "valid": True} for t in tasks]

    monkeypatch.setattr(preflight, "validate_many", fake_validate)
    reuse = {
        **shipped,
        "entries": [stale, *[e for e in shipped["entries"] if e != by_id[stale["task_id"]]]],
    }
    built = build_manifest(config, runner=None, reuse=reuse)
    assert validated == [stale["task_id"]]
    assert [e["task_id"] for e in built["entries"]] == config.candidate_ids()
    assert built["entries"][1:] == [by_id[i] for i in config.candidate_ids()[1:]]
    assert built["entries"][0]["fingerprint"] == fingerprint(generate(stale["task_id"]).files)
