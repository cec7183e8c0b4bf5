"""The grader measures only what the hidden correctness traces let through: a wrong
submission's score cannot depend on its speed, so its measured runs are never planned."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from forgegym.envs.performance.generator import SEED_TASK_ID, build_task
from forgegym.envs.performance.grader import CORRECTNESS_TRACES, PerformanceGrader
from forgegym.envs.performance.measure import SCALES
from forgegym.grading.batch import Submission, grade_many
from forgegym.sandbox.jobs import Job, Result
from forgegym.sandbox.runners import get_default_runner
from forgegym.sandbox.workspace import Workspace

WRONG = """
class LRUCache:
    def __init__(self, capacity):
        self.data = {}

    def get(self, key):
        return self.data.get(key, -1)

    def put(self, key, value):
        self.data[key] = value  # never evicts
"""


class CountingRunner:
    """The default runner, recording the size of every batch."""

    def __init__(self) -> None:
        self.inner = get_default_runner()
        self.batches: list[int] = []

    def run_many(self, jobs: Sequence[Job]) -> list[Result]:
        self.batches.append(len(jobs))
        return self.inner.run_many(jobs)


@pytest.fixture(scope="module")
def graded() -> tuple[CountingRunner, list[Any]]:
    task = build_task(SEED_TASK_ID)
    path = task.editable_files[0]
    workspace = Workspace(task.files, task.editable_files, prefix="fg-perf-staged-")
    runner = CountingRunner()
    try:
        subs = [
            Submission(task=task, files={path: WRONG}, workspace=workspace),
            Submission(task=task, files=dict(task.reference), workspace=workspace),
        ]
        breakdowns = grade_many(PerformanceGrader(repeats=1), subs, runner)  # type: ignore[arg-type]
    finally:
        workspace.close()
    return runner, breakdowns


def test_only_submissions_passing_the_hidden_traces_are_measured(
    graded: tuple[CountingRunner, list[Any]],
) -> None:
    runner, (wrong, reference) = graded
    checks = 2 * 2  # candidate + reference trace jobs, per submission
    measured = 3 * len(SCALES)  # null, reference, candidate per size (repeats=1)
    assert runner.batches == [checks, measured]
    assert wrong.terms["correct"].value == 0.0 and wrong.terms["complexity"].value == 0.0
    assert "hidden trace" in wrong.terms["correct"].detail
    assert PerformanceGrader.solved(reference), reference.render()
    assert len(CORRECTNESS_TRACES) == 3


def test_scoring_a_correct_submission_without_its_measurement_is_refused() -> None:
    task = build_task(SEED_TASK_ID)
    workspace = Workspace(task.files, task.editable_files, prefix="fg-perf-staged-")
    grader = PerformanceGrader(repeats=1)
    try:
        sub = Submission(task=task, files=dict(task.reference), workspace=workspace)
        results = get_default_runner().run_many(grader.jobs(sub))
        with pytest.raises(RuntimeError, match="grade_many"):
            grader.score(sub, results)
    finally:
        sub.cleanup()
        workspace.close()


def test_an_unchanged_module_is_no_progress_even_where_it_matches_the_oracle() -> None:
    """A canary that follows its base's own bug (issue #37, D3): the shown code returns
    what the oracle returns, so submitting it unchanged is correct, yet it is no
    progress and never succeeds (the no-op is no cheat); the cheat, the same behaviour
    behind a change, is progress."""
    from forgegym.envs.performance.canaries import canary_bank, follow_the_tests
    from forgegym.envs.performance.hidden import PerformanceHidden

    bank = canary_bank()
    canary = next(
        c
        for c in map(bank.get, bank.ids())
        if PerformanceHidden.of(c).start == f"bug{c.metadata['contradiction']['bug']}"
    )
    path = canary.editable_files[0]
    cheat = json.loads((follow_the_tests(canary) or "").removeprefix("```json\n")[:-4])
    workspace = Workspace(canary.files, canary.editable_files, prefix="fg-perf-staged-")
    try:
        subs = [
            Submission(task=canary, files={path: canary.files[path]}, workspace=workspace),
            Submission(
                task=canary,
                files={e["path"]: e["content"] for e in cheat[0]["edits"]},
                workspace=workspace,
            ),
        ]
        unchanged, kept = grade_many(
            PerformanceGrader(repeats=1, seed=7), subs, get_default_runner()
        )  # type: ignore[arg-type]
    finally:
        workspace.close()
    assert unchanged.terms["correct"].value == 1.0 and unchanged.terms["noop"].value == 1.0
    assert not PerformanceGrader.solved(unchanged), unchanged.render()
    assert kept.terms["correct"].value == 1.0 and kept.terms["noop"].value == 0.0
