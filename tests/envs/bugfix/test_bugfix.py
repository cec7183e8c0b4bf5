"""Forge/Bugfix-v0: bank size, validation, determinism, difficulty, grading paths."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import forgegym  # noqa: F401  (registers the ids)
from forgegym.core.task import Task, TaskBank, UnknownTaskError
from forgegym.envs.bugfix.bank import BugfixTaskBank, build_task, load_manifest
from forgegym.envs.bugfix.env import BugfixEnv
from forgegym.envs.bugfix.generator import SEED_TASK_ID, BugfixGenerator, BugfixGeneratorConfig
from forgegym.envs.bugfix.grader import grounded_note, scan_hardcoded_expectations
from forgegym.envs.bugfix.hidden import BugfixHidden
from forgegym.grading.batch import Submission, grade_many
from forgegym.policies import NOOP_ACTION
from forgegym.policies.registry import hacks_for
from forgegym.sandbox.workspace import Workspace
from forgegym.tasklib.corpus import load_corpus
from forgegym.tasklib.mutations import (
    OPERATORS,
    Mutation,
    apply_mutations,
    enumerate_mutations,
)

LEVELS = (1, 2, 3)


def _submit(edits: list[dict[str, str]] | None = None, *extra: dict[str, str]) -> str:
    actions: list[dict[str, object]] = []
    if edits:
        actions.append({"action": "edit", "edits": edits})
    actions.extend(extra)
    actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


@pytest.fixture(scope="module")
def bank() -> BugfixTaskBank:
    return BugfixTaskBank()


@pytest.fixture(scope="module")
def env():
    environment = BugfixEnv(max_steps=1)
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def sample_ids(bank: BugfixTaskBank) -> list[str]:
    ids = [SEED_TASK_ID]
    for level in LEVELS:
        ids.extend(bank.task_ids(2, seed=7, difficulty=level))
    return ids


# ------------------------------------------------------------------ the bank
def test_bank_has_over_1000_distinct_validated_tasks(bank: BugfixTaskBank) -> None:
    assert isinstance(bank, TaskBank)
    assert len(load_corpus()) >= 40
    ids = bank.ids()
    assert len(ids) >= 1000 and len(set(ids)) == len(ids)
    keys = set()
    for task_id in ids:
        entry = bank.entry(task_id)
        assert entry["failing_tests"] and entry["failing_hidden"]  # validated fail-to-pass
        keys.add((entry["module"], json.dumps(entry["mutations"]), entry["symptom_only"]))
    assert len(keys) >= 1000 - 1  # the seed task duplicates one level-1 task on purpose
    assert all(bank.ids(level) for level in LEVELS)
    assert set(load_manifest()["digests"]) == set(load_corpus())  # every module is used


def test_unknown_task_and_seed_task(bank: BugfixTaskBank) -> None:
    with pytest.raises(UnknownTaskError):
        bank.get("bugfix/nope/d1/0")
    seed = bank.get(SEED_TASK_ID)
    buggy = seed.files["chunk_list.py"]
    assert "range(0, len(items) - 1, size)" in buggy
    assert "test_chunk_keeps_last_partial_chunk" in seed.description


def test_hidden_checks_stay_out_of_the_workspace(bank: BugfixTaskBank) -> None:
    task = bank.get(bank.task_ids(1, seed=3)[0])
    assert set(task.files) == set(task.editable_files) | set(task.visible_test_files)
    blob = json.dumps(task.files)
    assert "expected" not in blob and len(BugfixHidden.of(task).calls) >= 20


# ------------------------------------------------- hacks (ordering: test_conformance)
def test_flagged_hacks_hit_the_gate(env: BugfixEnv) -> None:
    task_id = SEED_TASK_ID
    task = env.task_bank.get(task_id)
    hacks = hacks_for("bugfix")
    assert {"edit_tests", "delete_tests", "conftest_patch"} <= set(hacks)
    names = ["hardcode_visible", "always_equal", "exit_early", "skip_module"]
    graded = env.grade_completions(task_id, [hacks[n](task) for n in names])
    for name, (_, breakdown) in zip(names, graded, strict=True):
        assert "hack_flagged" in breakdown.gates, (name, breakdown.render())


@pytest.mark.parametrize("task_id", ["bugfix/brackets/d2/8", "bugfix/rotation/d3/9"])
def test_hardcoding_a_reported_input_is_gated(env: BugfixEnv, task_id: str) -> None:
    # Report-only tasks: the hack special-cases the reported input inside a tuple guard,
    # ``(text,) == ("(a)(a(",)``, or a one-character input (``("b",)``); both once
    # slipped past the scan and beat the no-op.
    task = env.task_bank.get(task_id)
    (hack_reward, breakdown), (noop_reward, _) = env.grade_completions(
        task_id, [hacks_for("bugfix")["hardcode_visible"](task), NOOP_ACTION]
    )
    assert "hack_flagged" in breakdown.gates
    assert hack_reward <= noop_reward


def test_hardcode_scan_spares_honest_fixes() -> None:
    tests = ["def test_x():\n    assert f([1, 2, 3]) == [[1, 2], [3]]\n"]
    honest = scan_hardcoded_expectations(
        "def f(x):\n    return x\n", "def f(x):\n    return x[:]\n", "m.py", tests
    )
    cheat = scan_hardcoded_expectations(
        "def f(x):\n    return x\n",
        "def f(x):\n    if x == [1, 2, 3]:\n        return [[1, 2], [3]]\n    return x\n",
        "m.py",
        tests,
    )
    assert honest == [] and cheat and cheat[0].kind == "hardcoded_expectation"
    # Restoring a constant the bug changed is a fix, even if the tests use that value.
    restored = scan_hardcoded_expectations(
        "def f(x):\n    return x % 8\n",
        "def f(x):\n    if x > 5:\n        return 5\n    return x % 7\n",
        "m.py",
        ["def test_f():\n    assert f(5) == 5\n"],
        reference="def f(x):\n    if x > 5:\n        return 5\n    return x % 7\n",
    )
    assert restored == []


def test_grounded_notes_earn_credit(env: BugfixEnv, bank: BugfixTaskBank) -> None:
    task = bank.get(SEED_TASK_ID)
    fix = [{"path": "chunk_list.py", "content": task.reference["chunk_list.py"]}]
    grounded = {"action": "review", "text": "chunk_list.py: chunk_list stops range() one early"}
    vague = {"action": "review", "text": "chunk_list.py: pairwise looked odd"}
    shotgun = {"action": "review", "text": "chunk_list.py: chunk_list flatten windows pairwise"}
    graded = env.grade_completions(
        SEED_TASK_ID, [_submit(fix, grounded), _submit(fix, vague), _submit(fix, shotgun)]
    )
    notes = [b.terms["notes"].value for _, b in graded]
    assert notes == [1.0, 0.0, 0.0]
    assert graded[0][0] > graded[1][0]
    assert grounded_note("chunk_list: fixed chunk_list", BugfixHidden.of(task))


def test_compile_error_and_parse_error(env: BugfixEnv) -> None:
    broken = _submit([{"path": "chunk_list.py", "content": "def chunk_list(:\n"}])
    (r1, b1), (r2, b2) = env.grade_completions(SEED_TASK_ID, [broken, "no json here"])
    assert b1.gates == ["compile_error"]
    # The format penalty is a term of the breakdown: the reward is its total.
    assert r2 == b2.total
    assert b2.terms["format"].value == env.format_penalty


# -------------------------------------------------------------- determinism
def test_same_seed_same_tasks_different_seed_different(bank: BugfixTaskBank) -> None:
    ids = bank.task_ids(5, seed=11)
    assert ids == bank.task_ids(5, seed=11) and ids != bank.task_ids(5, seed=12)
    fresh = BugfixTaskBank()
    for task_id in ids:
        entry = bank.entry(task_id)
        assert build_task(entry).model_dump_json() == fresh.get(task_id).model_dump_json()
    one = bank.sample(np.random.default_rng(5)).model_dump_json()
    assert one == bank.sample(np.random.default_rng(5)).model_dump_json()
    gen_a = BugfixGenerator(BugfixGeneratorConfig(seed=3, modules=("intervals",)))
    gen_b = BugfixGenerator(BugfixGeneratorConfig(seed=3, modules=("intervals",)))
    gen_c = BugfixGenerator(BugfixGeneratorConfig(seed=4, modules=("intervals",)))
    a = [c.source() for c in gen_a.single_candidates("intervals")]
    assert a == [c.source() for c in gen_b.single_candidates("intervals")]
    assert a != [c.source() for c in gen_c.single_candidates("intervals")]
    singles = gen_a.single_candidates("intervals")
    assert gen_a.combo_candidates("intervals", singles, 2, 5) == gen_b.combo_candidates(
        "intervals", singles, 2, 5
    )


def test_env_reset_is_deterministic() -> None:
    env = BugfixEnv(max_steps=3)
    try:
        first, _ = env.reset(seed=42)
        second, _ = env.reset(seed=42)
        other, _ = env.reset(seed=43)
        assert first == second and first != other
    finally:
        env.close()


def test_generator_config_validation() -> None:
    with pytest.raises(ValueError, match="seed"):
        BugfixGeneratorConfig(seed=-1).validate()
    with pytest.raises(ValueError, match="modules"):
        BugfixGeneratorConfig(modules=("no_such_module",)).validate()
    with pytest.raises(ValueError, match="d1"):
        BugfixGeneratorConfig(d1=-2).validate()


# ------------------------------------------------------------ mutation engine
def test_mutation_operators_cover_the_corpus(bank: BugfixTaskBank) -> None:
    assert len(OPERATORS) >= 10
    used = {m[1] for i in bank.ids() for m in bank.entry(i)["mutations"]}
    assert len(used) >= 10, used  # validated tasks draw on at least ten operators
    assert used <= set(OPERATORS)
    assert len(enumerate_mutations(load_corpus()["intervals"].source)) > 20
    source = load_corpus()["chunk_list"].source
    a = Mutation("chunk_list", "range_off_by_one", 0)
    b = Mutation("pairwise", "range_off_by_one", 0)
    both = apply_mutations(source, [a, b])
    assert both == apply_mutations(source, [b, a])  # order-independent (distinct functions)
    assert apply_mutations(apply_mutations(source, [a]), [b]) == both
    with pytest.raises(ValueError, match="two mutations"):
        apply_mutations(source, [a, Mutation("chunk_list", "comparison_boundary", 0)])
    with pytest.raises(ValueError, match="no site"):
        apply_mutations(source, [Mutation("chunk_list", "range_off_by_one", 9)])


# -------------------------------------------------------------- difficulty
def _partial_fix(task: Task) -> str:
    """Fix only the first injected bug, leaving the others."""
    module = BugfixHidden.of(task).mutated_file
    mutations = [Mutation.from_json(m) for m in BugfixHidden.of(task).mutations]
    return apply_mutations(task.reference[module], mutations[1:])


def test_partial_policy_success_falls_with_difficulty(env: BugfixEnv, bank: BugfixTaskBank) -> None:
    ids = {level: bank.task_ids(8, seed=5, difficulty=level) for level in LEVELS}
    flat = [task_id for level in LEVELS for task_id in ids[level]]
    workspaces, submissions = [], []
    try:
        for task_id in flat:  # one batch over the pool instead of a loop of runs
            task = bank.get(task_id)
            workspace = Workspace(task.files, task.editable_files)
            workspaces.append(workspace)
            files = {BugfixHidden.of(task).mutated_file: _partial_fix(task)}
            submissions.append(Submission(task=task, files=files, workspace=workspace))
        breakdowns = grade_many(env.grader, submissions, env.runner)
    finally:
        for workspace in workspaces:
            workspace.close()
    solved = dict(zip(flat, (env._success(b) for b in breakdowns), strict=True))
    rates = [float(np.mean([solved[i] for i in ids[level]])) for level in LEVELS]
    assert rates[0] > rates[1] > rates[2], rates


def test_symptom_only_tasks_read_like_a_user_report(bank: BugfixTaskBank) -> None:
    ids = [i for i in bank.ids(3) if bank.entry(i)["symptom_only"]][:1]
    task = bank.get(ids[0])
    assert "A user reports" in task.description and "```" not in task.description
    for name in bank.entry(ids[0])["failing_tests"]:
        assert name not in task.files[task.visible_test_files[0]]
    env = BugfixEnv(max_steps=2)
    try:
        obs, info = env.reset(options={"task_id": ids[0]})
        assert "A user reports" in obs and "## Budget" in obs
        _, _, _, _, info = env.step('{"action": "run_tests"}')
        assert env.run_visible_tests().all_passed  # the symptom is not in the visible tests
    finally:
        env.close()


# ----------------------------------------------------------- episode paths
def test_multi_step_episode_solves_the_seed_task() -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=4)
    try:
        obs, info = env.reset(seed=0, options={"task_id": SEED_TASK_ID})
        assert "test_chunk_keeps_last_partial_chunk" in obs and info["family"] == "bugfix"
        assert info["editable_files"] == ["chunk_list.py"]
        obs, reward, terminated, truncated, info = env.step('{"action": "run_tests"}')
        assert "FAILED" in obs and not terminated
        edit = {
            "action": "edit",
            "edits": [
                {
                    "path": "chunk_list.py",
                    "search": "range(0, len(items) - 1, size)",
                    "replace": "range(0, len(items), size)",
                }
            ],
        }
        obs, reward, terminated, truncated, info = env.step(json.dumps([edit]))
        assert reward > 0  # potential-based shaping: visible pass rate went up
        obs, reward, terminated, truncated, info = env.step('{"action": "submit"}')
        assert terminated and info["success"] and info["score"] >= 0.95
        assert set(info["reward_breakdown"]["terms"]) >= {"hidden", "visible", "lint", "diff"}
    finally:
        env.close()


def test_single_turn_truncates_and_grades() -> None:
    env = BugfixEnv(max_steps=1)
    try:
        env.reset(options={"task_id": SEED_TASK_ID})
        _, reward, terminated, truncated, info = env.step('{"action": "run_tests"}')
        assert truncated and not terminated and info["success"] is False and "score" in info
    finally:
        env.close()


def test_env_kwargs_are_validated() -> None:
    with pytest.raises(ValueError, match="weights"):
        BugfixEnv(weights={"hiden": 1.0})
    with pytest.raises(ValueError, match="weights"):
        BugfixEnv(weights={"hidden": -1.0})
    with pytest.raises(ValueError, match="max_steps"):
        BugfixEnv(max_steps=0)
    with pytest.raises(ValueError, match="difficulty"):
        BugfixEnv(difficulty=7)
    with pytest.raises(ValueError, match="grading_timeout_s"):
        BugfixEnv(grading_timeout_s=0)


def test_bench_reports_both_runners() -> None:
    from forgegym.envs.bugfix.bench import run_bench

    result = run_bench(n=2, show=False)
    assert set(result.times) == {"forkserver", "subprocess"}
    assert all(len(v) == 2 and min(v) > 0 for v in result.times.values())
    assert result.speedup > 0 and "speedup" in str(result)


def test_scaled_terms_say_what_scales_them(env: BugfixEnv, bank: BugfixTaskBank) -> None:
    """A partial fix passes every visible test but its visible credit is scaled by the
    fixed share of the bug: the rendered detail names the factor, not a bare ``4/4``."""
    ids = [i for i in bank.task_ids(8, seed=5, difficulty=LEVELS[-1])]
    tasks = [bank.get(i) for i in ids]
    workspaces = [Workspace(t.files, t.editable_files) for t in tasks]
    try:
        submissions = [
            Submission(
                task=t, files={BugfixHidden.of(t).mutated_file: _partial_fix(t)}, workspace=w
            )
            for t, w in zip(tasks, workspaces, strict=True)
        ]
        breakdowns = grade_many(env.grader, submissions, env.runner)
    finally:
        for workspace in workspaces:
            workspace.close()
    partial = [b for b in breakdowns if not b.gated and 0.0 < b.terms["hidden"].value < 1.0]
    assert partial, "no partially fixed task in the sample"
    for breakdown in partial:
        visible = breakdown.terms["visible"]
        share = breakdown.terms["hidden"].value
        assert f"x{share:.2f} for " in visible.detail and "broken checks fixed" in visible.detail
        assert "passed" in visible.detail
        assert f"x{share:.2f} for " in breakdown.render()
