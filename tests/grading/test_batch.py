"""``grade_many`` with staged graders: follow-up jobs run in batched rounds, only for the
submissions that ask for them, and ``score`` sees every result in order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from forgegym.core.task import Task
from forgegym.grading.batch import MAX_ROUNDS, Submission, grade_many
from forgegym.rewards import RewardBreakdown, compose
from forgegym.sandbox.jobs import CallJob, CallOutcome, CallResult, CallSpec, Job, RunStatus
from forgegym.sandbox.workspace import Workspace


class EchoRunner:
    """Runs nothing: each job's result echoes its first call's first argument."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []

    def run_many(self, jobs: Sequence[Job]) -> list[CallResult]:
        values = [job.calls[0].args[0] for job in jobs if isinstance(job, CallJob)]
        self.batches.append(values)
        return [
            CallResult(status=RunStatus.COMPLETED, outcomes=[CallOutcome(ok=True, value=v)])
            for v in values
        ]


def _job(tmp: Path, value: Any) -> CallJob:
    return CallJob(workdir=str(tmp), calls=[CallSpec(target="m:f", args=[value])])


class TwoStage:
    """First a check job; a follow-up only when the check's value is ``"pass"``."""

    def __init__(self, tmp: Path, *, fail_more: bool = False) -> None:
        self.tmp, self.fail_more = tmp, fail_more

    def jobs(self, sub: Submission) -> list[Job]:
        return [_job(self.tmp, sub.files["verdict"])]

    def more_jobs(self, sub: Submission, results: Sequence[Any]) -> list[Job]:
        if self.fail_more and sub.files["verdict"] == "boom":
            raise RuntimeError("planning failed")
        if len(results) == 1 and results[0].outcome(0).value == "pass":
            return [_job(self.tmp, "measured-1"), _job(self.tmp, "measured-2")]
        return []

    def score(self, sub: Submission, results: Sequence[Any]) -> RewardBreakdown:
        seen = [r.outcome(0).value for r in results]
        return compose({}, {}, notes=[",".join(seen)])


class Endless(TwoStage):
    def more_jobs(self, sub: Submission, results: Sequence[Any]) -> list[Job]:
        return [_job(self.tmp, f"round-{len(results)}")]


def _subs(*verdicts: str) -> list[Submission]:
    task = Task(task_id="t", family="test", difficulty=0, title="t", description="d")
    workspace = Workspace({"verdict": ""}, ["verdict"])
    return [Submission(task=task, files={"verdict": v}, workspace=workspace) for v in verdicts]


def test_follow_ups_run_batched_and_only_where_asked(tmp_path: Path) -> None:
    runner = EchoRunner()
    breakdowns = grade_many(TwoStage(tmp_path), _subs("pass", "fail", "pass"), runner)  # type: ignore[arg-type]
    assert runner.batches == [
        ["pass", "fail", "pass"],
        ["measured-1", "measured-2", "measured-1", "measured-2"],
    ]
    assert [b.notes for b in breakdowns] == [
        ["pass,measured-1,measured-2"],
        ["fail"],
        ["pass,measured-1,measured-2"],
    ]


def test_a_failing_follow_up_plan_is_unverifiable_for_that_submission_only(
    tmp_path: Path,
) -> None:
    grader = TwoStage(tmp_path, fail_more=True)
    breakdowns = grade_many(grader, _subs("boom", "pass"), EchoRunner())  # type: ignore[arg-type]
    assert breakdowns[0].gates == ["unverifiable"]
    assert "more_jobs" in breakdowns[0].notes[0] and "planning failed" in breakdowns[0].notes[0]
    assert not breakdowns[1].gates and breakdowns[1].notes == ["pass,measured-1,measured-2"]


def test_rounds_are_bounded(tmp_path: Path) -> None:
    runner = EchoRunner()
    grade_many(Endless(tmp_path), _subs("x"), runner)  # type: ignore[arg-type]
    assert len(runner.batches) == 1 + MAX_ROUNDS
