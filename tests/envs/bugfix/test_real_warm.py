"""Grading real tasks fast gives the unoptimised path's verdicts: warm test code in the
zygotes, runs shared by completions of one task and patch, memoised compile and lint
checks, and the project's caches on disk (a bank built offline from the vendored
textkit project, as ``tests/tasklib/test_factory.py`` builds it)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.policies import NOOP_ACTION
from forgegym.sandbox.runners import ForkServerRunner, warm
from tests.fixtures.textkit_bank import build_textkit_bank

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("warmbank")
    return build_textkit_bank(base)


@pytest.fixture
def real_env(built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    cache, out = built
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setenv("FORGEGYM_SDIST_CACHE", str(cache))
    return cache, out


def _fix(task) -> str:
    ((path, content),) = task.reference.items()
    return json.dumps({"action": "edit", "edits": [{"path": path, "content": content}]})


def _with_plan(text: str, note: str) -> str:
    return json.dumps([{"action": "plan", "text": note}, json.loads(text)])


def test_optimised_real_grading_gives_the_unoptimised_verdicts(real_env) -> None:
    cache, out = real_env
    bank = RealTaskBank(out, cache_dir=cache, allow_download=False)
    ids = bank.ids()[:3]
    items = []
    for task_id in ids:
        fix = _fix(bank.get(task_id))
        # a fix, the same fix with a note (shares the fix's run), a no-op, the fix again
        items += [(task_id, t) for t in (fix, _with_plan(fix, "look"), NOOP_ACTION, fix)]
    fast_runner = ForkServerRunner(workers=2)
    slow_runner = ForkServerRunner(workers=1, warm_code=False)
    fast = gym.make("Forge/Bugfix-v0", bank=str(out), max_steps=1, runner=fast_runner)
    slow = gym.make(
        "Forge/Bugfix-v0",
        bank=str(out),
        max_steps=1,
        runner=slow_runner,
        optimised_grading=False,
    )
    try:
        optimised = fast.unwrapped.grade_batch(items)
        reference = []
        for task_id in ids:
            mine = [text for t, text in items if t == task_id]
            reference += slow.unwrapped.grade_completions(task_id, mine)
        assert len(optimised) == len(reference) == len(items)
        for (r1, b1), (r2, b2) in zip(optimised, reference, strict=True):
            assert r1 == r2
            assert b1.model_dump() == b2.model_dump()
        solved = [fast.unwrapped.success_predicate(b) for _, b in optimised]
        assert solved == [True, True, False, True] * len(ids)
        # the project's tests get registered as warm code (compiled in the background
        # on a cold cache) and written beside the unpacked projects for later processes
        for thread in threading.enumerate():
            if thread.name == "forgegym-warm-code":
                thread.join(timeout=540)  # a loaded 2-core machine compiles slowly
        assert warm.registered()
        assert list((Path(os.environ["FORGEGYM_REAL_DIR"]) / ".warm").glob("*.bin"))
    finally:
        fast.close()
        slow.close()
        fast_runner.close()
        slow_runner.close()


def test_a_second_bank_reads_the_projects_caches_from_disk(real_env, tmp_path: Path) -> None:
    cache, out = real_env
    task_id = RealTaskBank(out, cache_dir=cache, allow_download=False).ids()[0]
    first = RealTaskBank(out, cache_dir=cache, allow_download=False).get(task_id)
    projects = tmp_path / "projects"
    imports = list((projects / ".imports").glob("*.json"))
    assert len(imports) == 1
    recorded = json.loads(imports[0].read_text())
    assert recorded == first.hidden["test_imports"] and any(recorded.values())
    second = RealTaskBank(out, cache_dir=cache, allow_download=False).get(task_id)
    assert second.model_dump() == first.model_dump()
    # what a new bank reads is the file (not a fresh parse): make that observable
    imports[0].write_text(json.dumps({path: [] for path in recorded}))
    third = RealTaskBank(out, cache_dir=cache, allow_download=False).get(task_id)
    assert third.hidden["test_imports"] == {path: [] for path in recorded}


def test_a_checked_task_is_its_unchecked_task_with_the_checks(real_env) -> None:
    """``build`` adds the behaviour checks to the task ``unchecked`` built (the mutation
    applied once): the task built from scratch with the checks, field for field."""
    from forgegym.envs.bugfix.real import build_real_task

    cache, out = real_env
    bank = RealTaskBank(out, cache_dir=cache, allow_download=False)
    for task_id in bank.ids()[:2]:
        task = bank.build(task_id)
        entry = bank.entry(task_id)
        base = bank._bases[(entry["project"], entry["version"])]
        checks = bank.checks(task_id).model_dump(mode="json")
        assert task.hidden["behaviour"] == checks and checks["status"] != "unavailable"
        assert task == build_real_task(entry, base, checks)


def test_a_test_rechecked_out_of_passing_is_not_a_fail_to_pass_test(real_env) -> None:
    """A test the pristine project fails under today's sandbox (moved out of ``passing``
    by ``benchmarks/real_bank/recheck_passing.py``) can pass for no candidate: it leaves
    the fail-to-pass set, unless it is the task's only one (the task then stays as it
    was, for validation to drop)."""
    from dataclasses import replace

    from forgegym.envs.bugfix.real import build_real_task

    cache, out = real_env
    bank = RealTaskBank(out, cache_dir=cache, allow_download=False)
    task_id = next(i for i in bank.ids() if len(bank.entry(i)["f2p"]) > 1)
    bank.unchecked(task_id)  # loads the project's base
    entry = bank.entry(task_id)
    base = bank._bases[(entry["project"], entry["version"])]
    first, *rest = entry["f2p"]
    task = build_real_task(entry, replace(base, rechecked_out=frozenset({first})))
    assert task.hidden["failing_tests"] == rest
    alone = {**entry, "f2p": [first]}
    task = build_real_task(alone, replace(base, rechecked_out=frozenset({first})))
    assert task.hidden["failing_tests"] == [first]
