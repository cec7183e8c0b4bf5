"""Batch grading: a family's grader turns submissions into runner jobs and results
into a :class:`~forgegym.rewards.RewardBreakdown`.

Splitting grading into ``jobs`` and ``score`` is what lets a GRPO group of 8-16
completions be graded with one ``run_many`` call that keeps every core busy, instead
of a loop of blocking runs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from forgegym.core.task import Task
from forgegym.sandbox.jobs import Job, Result

if TYPE_CHECKING:
    from forgegym.rewards import RewardBreakdown
    from forgegym.sandbox.runner import Runner
    from forgegym.sandbox.workspace import Workspace

__all__ = ["Grader", "Note", "StagedGrader", "Submission", "grade_many"]

#: Most follow-up rounds :func:`grade_many` runs for a :class:`StagedGrader`.
MAX_ROUNDS = 4

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Note:
    """A recorded ``plan`` / ``review`` / ``reflect`` action."""

    kind: str
    text: str


@dataclass
class Submission:
    """The state a grader scores: the final editable files plus the episode's record."""

    task: Task
    #: The agent's files: editable files still present, plus files it created.
    files: dict[str, str]
    workspace: Workspace
    #: Editable files the agent deleted or moved away (tasks with ``creatable`` only).
    deleted: tuple[str, ...] = ()
    notes: list[Note] = field(default_factory=list)
    #: The last / every structured claim the family's actions carried (e.g.
    #: FlakyRepair's ``Diagnosis``); ``None`` / empty for families without one.
    diagnosis: Any = None
    diagnoses: list[Any] = field(default_factory=list)
    steps_used: int = 0
    max_steps: int = 1
    parse_errors: int = 0
    #: Directories created for this submission's jobs, removed after scoring.
    scratch: list[Path] = field(default_factory=list)
    #: What a grader's ``jobs`` computed for its ``score`` (static scans, pending lint),
    #: kept on the submission so nothing outlives it.
    grading_state: dict[str, Any] = field(default_factory=dict)

    def materialise(self, extra_files: dict[str, str] | None = None) -> Path:
        """A grading copy of this submission (pristine non-editable files restored)."""
        directory = self.workspace.materialise(self.files, extra_files, deleted=self.deleted)
        self.scratch.append(directory)
        return directory

    def cleanup(self) -> None:
        for directory in self.scratch:
            self.workspace.discard(directory)
        self.scratch.clear()


class Grader(Protocol):
    """What every code family implements for final grading."""

    def jobs(self, submission: Submission) -> list[Job]:
        """The runner jobs needed to score ``submission`` (may be empty)."""
        ...

    def score(self, submission: Submission, results: Sequence[Result]) -> RewardBreakdown:
        """Score ``submission`` from the results of its jobs (same order)."""
        ...

    # A grader holding resources (threads, caches) may also define ``close()``;
    # ``CodeEnv.close`` calls it when present.


class StagedGrader(Grader, Protocol):
    """A grader whose later jobs depend on earlier results (e.g. measure speed only once
    the hidden correctness checks passed: a wrong submission's measurement cannot
    change its score, so running it only burns CPU).

    :func:`grade_many` runs every submission's ``jobs`` in one batch, then asks
    ``more_jobs`` with the results so far and runs all follow-ups in one batch per
    round (at most :data:`MAX_ROUNDS`), and finally calls ``score`` with all of the
    submission's results in order.
    """

    def more_jobs(self, submission: Submission, results: Sequence[Result]) -> list[Job]:
        """Jobs to run after ``results`` (this submission's so far); ``[]`` when done."""
        ...


def grade_many(
    grader: Grader, submissions: Sequence[Submission], runner: Runner | None = None
) -> list[RewardBreakdown]:
    """Grade many submissions with one batched ``run_many`` over the runner's pool.

    Never raises on a submission: a grader that fails on one (a bug, or model text
    beyond what a scan could bound) gives that submission the ``unverifiable`` gate
    with the error in its notes, and the others are graded normally.
    """
    from forgegym.sandbox.runner import get_default_runner

    runner = runner or get_default_runner()
    # Per submission: its results so far, or a failure note (unverifiable).
    state: list[list[Result] | str] = []
    try:
        pending: list[tuple[int, list[Job]]] = []
        for index, submission in enumerate(submissions):
            state.append([])
            try:
                pending.append((index, grader.jobs(submission)))
            except Exception as exc:  # noqa: BLE001 - one bad submission must not end a run
                state[index] = _failure("jobs", exc)
        more = getattr(grader, "more_jobs", None)
        for round_ in range(MAX_ROUNDS + 1):
            _run_round(runner, pending, state)
            if more is None or round_ == MAX_ROUNDS:
                break
            pending = []
            for index, submission in enumerate(submissions):
                done = state[index]
                if isinstance(done, str):
                    continue
                try:
                    jobs = more(submission, list(done))
                except Exception as exc:  # noqa: BLE001
                    state[index] = _failure("more_jobs", exc)
                    continue
                if jobs:
                    pending.append((index, jobs))
            if not pending:
                break
        breakdowns = []
        for submission, done in zip(submissions, state, strict=True):
            if isinstance(done, str):
                breakdowns.append(_unverifiable(done))
                continue
            try:
                breakdowns.append(grader.score(submission, done))
            except Exception as exc:  # noqa: BLE001
                breakdowns.append(_unverifiable(_failure("score", exc)))
        return breakdowns
    finally:
        for submission in submissions:
            submission.cleanup()


def _run_round(
    runner: Runner, pending: Sequence[tuple[int, list[Job]]], state: list[list[Result] | str]
) -> None:
    """Run every pending submission's jobs in one batch; append each one's results."""
    batch = [job for _, jobs in pending for job in jobs]
    results = runner.run_many(batch) if batch else []
    start = 0
    for index, jobs in pending:
        done = state[index]
        assert not isinstance(done, str)
        done.extend(results[start : start + len(jobs)])
        start += len(jobs)


def _failure(stage: str, exc: BaseException) -> str:
    logger.warning("grading failed in %s: %r", stage, exc, exc_info=exc)
    return f"cannot verify: grading failed in {stage} ({type(exc).__name__}: {exc})"[:500]


def _unverifiable(note: str) -> RewardBreakdown:
    from forgegym.rewards import compose

    return compose({}, {}, gates=["unverifiable"], notes=[note])
