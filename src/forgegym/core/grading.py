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

__all__ = ["Grader", "Note", "Submission", "grade_many"]

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
    all_jobs: list[Job] = []
    spans: list[tuple[int, int] | str] = []
    try:
        for submission in submissions:
            try:
                jobs = grader.jobs(submission)
            except Exception as exc:  # noqa: BLE001 - one bad submission must not end a run
                spans.append(_failure("jobs", exc))
                continue
            spans.append((len(all_jobs), len(all_jobs) + len(jobs)))
            all_jobs.extend(jobs)
        results = runner.run_many(all_jobs) if all_jobs else []
        breakdowns = []
        for submission, span in zip(submissions, spans, strict=True):
            if isinstance(span, str):
                breakdowns.append(_unverifiable(span))
                continue
            try:
                breakdowns.append(grader.score(submission, results[span[0] : span[1]]))
            except Exception as exc:  # noqa: BLE001
                breakdowns.append(_unverifiable(_failure("score", exc)))
        return breakdowns
    finally:
        for submission in submissions:
            submission.cleanup()


def _failure(stage: str, exc: BaseException) -> str:
    logger.warning("grading failed in %s: %r", stage, exc, exc_info=exc)
    return f"cannot verify: grading failed in {stage} ({type(exc).__name__}: {exc})"[:500]


def _unverifiable(note: str) -> RewardBreakdown:
    from forgegym.rewards import compose

    return compose({}, {}, gates=["unverifiable"], notes=[note])
