"""The CodeGrader template: static gates, then sandbox jobs, then terms, composed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from forgegym.core.code_grader import CodeGrader, GradingState, Terms, check_timeout, hack_gate
from forgegym.core.grading import Submission, grade_many
from forgegym.core.task import Task
from forgegym.rewards.antihack import HackFinding
from forgegym.sandbox.jobs import CallJob, CallResult, CallSpec, Job
from forgegym.sandbox.workspace import Workspace

TASK = Task(
    task_id="toy/1",
    family="toy",
    difficulty=1,
    title="double",
    description="make double(x) return 2 * x",
    files={"m.py": "def double(x):\n    return x\n"},
    editable_files=("m.py",),
)


class _Grader(CodeGrader):
    name = "toy"
    default_weights = {"correct": 1.0, "lint": 0.5}
    lints = True

    def __init__(self) -> None:
        super().__init__()
        self.linted = 0

    def scan(self, submission: Submission) -> list[HackFinding]:
        text = submission.files["m.py"]
        return [HackFinding(kind="exit_call", path="m.py", line=1, detail="x")] * ("exit" in text)

    def lint(self, submission: Submission) -> float:
        self.linted += 1
        return 0.5

    def sandbox_jobs(self, submission: Submission, state: GradingState) -> list[Job]:
        state.extra = [3, 5]
        calls = [CallSpec(target="m:double", args=[x]) for x in state.extra]
        return [CallJob(workdir=str(submission.materialise()), calls=calls)]

    def terms(self, submission: Submission, results: Sequence[Any], state: GradingState) -> Terms:
        (result,) = results
        assert isinstance(result, CallResult)
        ok = [result.outcome(i).value == 2 * x for i, x in enumerate(state.extra)]
        correct = sum(ok) / len(ok)
        lint = self.lint_result(submission, state)
        return Terms({"correct": correct, "lint": lint * correct}, notes=[*state.notes, "ran"])


def _grade(texts: list[str]) -> list[Any]:
    grader = _Grader()
    try:
        with Workspace(TASK.files, TASK.editable_files) as ws:
            subs = [Submission(task=TASK, files={"m.py": t}, workspace=ws) for t in texts]
            return [*grade_many(grader, subs), grader.linted]
    finally:
        grader.close()


def test_gates_run_nothing_and_ungated_submissions_get_their_terms() -> None:
    fixed = "def double(x):\n    return 2 * x\n"
    good, broken, hack, unparsable, linted = _grade(
        [fixed, TASK.files["m.py"], fixed + "exit()\n", "def double(x:\n"]
    )
    assert not good.gates and good.terms["correct"].value == 1.0 and "ran" in good.notes
    assert good.terms["lint"].value == 0.5 and good.total > broken.total
    assert not broken.gates and broken.terms["correct"].value == 0.0
    assert hack.gates == ["hack_flagged"] and hack.total == -1.0 and not hack.terms
    assert unparsable.gates == ["compile_error"] and "does not compile" in unparsable.notes[0]
    assert linted == 2  # lint only ran for the two ungated submissions


def test_hack_gate_and_timeout_checks() -> None:
    finding = HackFinding(kind="skip_marker", path="t.py", line=1, detail="d")
    over = HackFinding(kind="unverifiable", path="t.py", line=0, detail="d")
    assert hack_gate([]) is None and hack_gate([finding]) == "hack_flagged"
    assert hack_gate([finding, over]) == "unverifiable"
    assert check_timeout(3) == 3.0
    for bad in (0, -1, 601, True, "5"):
        with pytest.raises(ValueError, match="timeout_s"):
            check_timeout(bad)
