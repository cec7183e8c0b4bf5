"""Optimised batch grading gives exactly the reference path's rewards and breakdowns.

``optimised_grading=False`` is the explicit switch for the reference path (per-task
``grade_completions``, one ``run_many``, per-completion lint, no parser caches); the
optimised path dedups identical submissions, lints a batch with one ruff run, streams
jobs to the pool and grades several tasks in one batch. Same inputs, same outputs.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.grading import Submission, grade_many, submission_key
from forgegym.family import family_for_env
from forgegym.policies import NOOP_ACTION
from forgegym.sandbox.workspace import Workspace


def _sample(env: Any, env_id: str, task_ids: list[str]) -> list[tuple[str, str]]:
    """Per task: successes, duplicates (verbatim and after free text), no-ops, a parse
    error, a compile error, hacks, a partial fix where the family has one."""
    family = family_for_env(env_id)
    reference = family.reference_action()
    partial = family.partial_action()
    hacks = list(family.hack_actions().values())
    items: list[tuple[str, str]] = []
    for index, task_id in enumerate(task_ids):
        task = env.task_bank.get(task_id)
        ref = reference(task)
        broken = json.dumps(
            {"action": "edit", "edits": [{"path": task.editable_files[0], "content": "def (:\n"}]}
        )
        completions = [
            ref,
            NOOP_ACTION,
            ref,  # verbatim duplicate
            "I found the bug; here is the fix.\n" + ref,  # same submission, other text
            "Nothing to change.\n" + NOOP_ACTION,
            "this is not an action",
            broken,
            json.dumps({"action": "plan", "text": "read the failing test"}),
            *(hack(task) for hack in hacks[index::2][:2]),  # different hacks per task
        ]
        if partial is not None:
            completions.append(partial(task) or NOOP_ACTION)
        items.extend((task_id, completion) for completion in completions)
    return items


def _compare(env_id: str, n_tasks: int, **kwargs: Any) -> list[float]:
    fast = gym.make(env_id, max_steps=1, **kwargs).unwrapped
    slow = gym.make(env_id, max_steps=1, optimised_grading=False, **kwargs).unwrapped
    try:
        assert fast.optimised_grading and not slow.optimised_grading
        task_ids = fast.task_bank.task_ids(n_tasks, seed=11)
        items = _sample(fast, env_id, task_ids)
        optimised = fast.grade_batch(items)  # every task in one batch
        reference: list[tuple[float, Any]] = []
        for task_id in task_ids:
            reference += slow.grade_completions(task_id, [c for t, c in items if t == task_id])
        assert len(optimised) == len(reference) == len(items)
        for (item, (r_fast, b_fast)), (r_slow, b_slow) in zip(
            zip(items, optimised, strict=True), reference, strict=True
        ):
            assert r_fast == r_slow, item
            assert b_fast.model_dump() == b_slow.model_dump(), item
        # The per-task API of the optimised env agrees too.
        first = [c for t, c in items if t == task_ids[0]]
        again = fast.grade_completions(task_ids[0], first)
        assert [r for r, _ in again] == [r for r, _ in reference[: len(first)]]
        return [r for r, _ in optimised]
    finally:
        fast.close()
        slow.close()


def _spread(rewards: list[float]) -> None:
    # The sample must exercise different verdicts, or agreement would prove little.
    assert len({round(r, 6) for r in rewards}) >= 4, rewards


def test_bugfix_optimised_grading_equals_the_reference_path() -> None:
    _spread(_compare("Forge/Bugfix-v0", 2))


@pytest.mark.slow
def test_flaky_optimised_grading_equals_the_reference_path() -> None:
    _spread(_compare("Forge/FlakyRepair-v0", 1))


@pytest.mark.slow
def test_refactor_optimised_grading_equals_the_reference_path() -> None:
    _spread(_compare("Forge/Refactor-v0", 1))


def test_identical_submissions_are_graded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=1).unwrapped
    try:
        task_id = env.task_bank.task_ids(1, seed=5)[0]
        ref = family_for_env("Forge/Bugfix-v0").reference_action()(env.task_bank.get(task_id))
        group = [ref, NOOP_ACTION] * 4 + ["thinking...\n" + ref]
        seen: list[str] = []
        jobs = env.grader.jobs

        def counting(submission: Submission) -> Any:
            seen.append(submission_key(submission))
            return jobs(submission)

        monkeypatch.setattr(env.grader, "jobs", counting)
        graded = env.grade_completions(task_id, group)
        assert len(seen) == 2 == len(set(seen))  # one fix, one no-op
        assert [r for r, _ in graded] == [graded[0][0], graded[1][0]] * 4 + [graded[0][0]]
        assert graded[0][0] > graded[1][0]
    finally:
        env.close()


def test_submission_key_tells_apart_what_graders_read() -> None:
    files = {"m.py": "x = 1\n", "test_m.py": "def test(): pass\n"}
    workspace = Workspace(files, ["m.py"], on_disk=False)

    class _Task:
        task_id = "t"

    def key(**changes: Any) -> str:
        fields: dict[str, Any] = {"task": _Task(), "files": {"m.py": "x = 1\n"}}
        fields.update(changes)
        return submission_key(Submission(workspace=workspace, **fields))

    base = key()
    assert key() == base
    assert key(files={"m.py": "x = 2\n"}) != base
    assert key(parse_errors=1) != base
    assert key(steps_used=2) != base
    assert key(deleted=("m.py",)) != base
    from forgegym.core.grading import Note

    assert key(notes=[Note("review", "m.py")]) != base
    assert key(diagnosis={"category": "order"}) != base


def test_grade_many_never_raises_and_keeps_order_when_a_grader_fails() -> None:
    class Broken:
        def jobs(self, submission: Submission) -> list[Any]:
            if submission.files.get("m.py") == "boom":
                raise RuntimeError("scan bug")
            return []

        def score(self, submission: Submission, results: Any) -> Any:
            from forgegym.rewards import compose

            return compose({"ok": 1.0 if submission.files["m.py"] == "x" else 0.5}, {"ok": 1.0})

    class _Task:
        task_id = "t"

    workspace = Workspace({"m.py": "x"}, ["m.py"], on_disk=False)
    subs = [
        Submission(task=_Task(), files={"m.py": text}, workspace=workspace)  # type: ignore[arg-type]
        for text in ("x", "boom", "y", "x")
    ]
    out = grade_many(Broken(), subs, optimised=True)
    assert [b.gates for b in out] == [[], ["unverifiable"], [], []]
    assert [b.total for b in out] == [out[0].total, out[1].total, out[2].total, out[0].total]
    assert out[0].total > out[2].total


def test_trl_reward_functions_agree_on_both_paths() -> None:
    from forgegym.integrations.trl import make_reward_funcs

    env_id = "Forge/Bugfix-v0"
    env = gym.make(env_id, max_steps=1).unwrapped
    try:
        task_ids = env.task_bank.task_ids(2, seed=21)
        items = [(t, c) for t, c in _sample(env, env_id, task_ids) if "edit" in c or "not" in c]
    finally:
        env.close()
    outputs = []
    for kwargs in ({}, {"optimised_grading": False}):
        (reward,) = make_reward_funcs(env_id, env_kwargs=kwargs)
        logged: dict[str, float] = {}
        values = reward(
            prompts=[[]] * len(items),
            completions=[[{"role": "assistant", "content": c}] for _, c in items],
            task_id=[t for t, _ in items],
            log_metric=logged.__setitem__,
        )
        outputs.append((values, logged))
    assert outputs[0] == outputs[1]
    assert 0.0 < outputs[0][1]["reward/success"] < 1.0
