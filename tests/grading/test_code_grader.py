"""The CodeGrader template: static gates, then sandbox jobs, then terms, composed."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from forgegym.core.task import Task
from forgegym.grading.batch import Submission, grade_many
from forgegym.grading.code_grader import (
    CodeGrader,
    GradingState,
    ResultGate,
    Terms,
    check_timeout,
    gate_hack_findings,
    hack_gate,
)
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


def test_gate_hack_findings_is_the_code_graders_gate_to_notes_step() -> None:
    """Graders that are not CodeGraders (Bugfix's repository mode) gate and note
    findings exactly as CodeGrader's default gates do."""
    findings = [
        HackFinding(kind="exit_call", path="m.py", line=i, detail="`sys.exit`") for i in (3, 9)
    ]
    assert gate_hack_findings(["compile_error"], ["n"], []) == (["compile_error"], ["n"])
    gates, notes = gate_hack_findings([], [], findings * 4)
    assert gates == ["hack_flagged"] and len(notes) == 5
    assert notes[:2] == [
        "hack: exit_call at m.py:3 (`sys.exit`)",
        "hack: exit_call at m.py:9 (`sys.exit`)",
    ]
    grader = _Grader()
    try:
        assert grader.gate_findings(["compile_error"], [], findings * 4) == gate_hack_findings(
            ["compile_error"], [], findings * 4
        )
    finally:
        grader.close()
    over = HackFinding(kind="unverifiable", path="m.py", line=0, detail="too deep")
    gates, notes = gate_hack_findings([], [], [over], note="{path}: {detail}", limit=1)
    assert (gates, notes) == (["unverifiable"], ["m.py: too deep"])


# ------------------------------------------------------------ follow-up stage
FIXED = "def double(x):\n    return 2 * x\n"
SMALL_ONLY = "def double(x):\n    return 2 * x if x < 100 else x\n"
LARGE = 10**6


class _Staged(_Grader):
    """Doubles 3 and 5; a submission that gets both right earns one follow-up round
    (doubling a large number), and nothing after it."""

    name = "toy-staged"
    default_weights = {"correct": 1.0, "lint": 0.5, "large": 1.0}

    def __init__(self, *, fail_on: str | None = None) -> None:
        super().__init__()
        self.asked: list[tuple[str, int, int]] = []
        self.fail_on = fail_on

    def follow_up_jobs(
        self, submission: Submission, results: Sequence[Any], state: GradingState
    ) -> list[Job]:
        text = submission.files["m.py"]
        self.asked.append((text, state.stage, len(results)))
        if text == self.fail_on:
            raise RuntimeError("planning bug")
        (first, *_) = results
        if state.stage > 0 or not all(
            first.outcome(i).value == 2 * x for i, x in enumerate(state.extra)
        ):
            return []
        calls = [CallSpec(target="m:double", args=[LARGE])]
        return [CallJob(workdir=str(submission.materialise()), calls=calls)]

    def terms(self, submission: Submission, results: Sequence[Any], state: GradingState) -> Terms:
        terms = super().terms(submission, results[:1], state)
        large = len(results) == 2 and results[1].outcome(0).value == 2 * LARGE
        terms.values["large"] = 1.0 if large else 0.0
        return terms


def _grade_staged(texts: list[str], *, optimised: bool, fail_on: str | None = None) -> Any:
    grader = _Staged(fail_on=fail_on)
    try:
        with Workspace(TASK.files, TASK.editable_files) as ws:
            subs = [Submission(task=TASK, files={"m.py": t}, workspace=ws) for t in texts]
            return grade_many(grader, subs, optimised=optimised), grader.asked
    finally:
        grader.close()


def test_follow_up_jobs_run_only_where_earned_and_both_paths_agree() -> None:
    texts = [FIXED, TASK.files["m.py"], SMALL_ONLY, FIXED + "exit()\n"]
    graded = {flag: _grade_staged(texts, optimised=flag) for flag in (False, True)}
    (fixed, wrong, small_only, hack), asked = graded[False]
    assert fixed.terms["large"].value == 1.0 and small_only.terms["large"].value == 0.0
    assert small_only.terms["correct"].value == 1.0 and fixed.total > small_only.total
    assert wrong.terms["large"].value == 0.0 and hack.gates == ["hack_flagged"]
    # Asked after the sandbox jobs (stage 0, one result), and again only after a
    # non-empty follow-up round (stage 1, two results); a gated submission never.
    assert asked == [
        (FIXED, 0, 1),
        (TASK.files["m.py"], 0, 1),
        (SMALL_ONLY, 0, 1),
        (FIXED, 1, 2),
        (SMALL_ONLY, 1, 2),
    ]
    breakdowns, asked_optimised = graded[True]
    assert [b.model_dump() for b in breakdowns] == [b.model_dump() for b in graded[False][0]]
    assert asked_optimised == asked  # the same planning order on both paths


def test_a_failing_follow_up_plan_is_unverifiable_for_that_submission_only() -> None:
    for optimised in (False, True):
        (bad, good), _ = _grade_staged([SMALL_ONLY, FIXED], optimised=optimised, fail_on=SMALL_ONLY)
        assert bad.gates == ["unverifiable"] and "planning bug" in bad.notes[0]
        assert not good.gates and good.terms["large"].value == 1.0


def test_scoring_without_the_follow_up_stage_is_refused_only_when_it_has_jobs() -> None:
    from forgegym.sandbox.runners import get_default_runner

    grader = _Staged()
    try:
        with Workspace(TASK.files, TASK.editable_files) as ws:
            for text, refused in ((FIXED, True), (TASK.files["m.py"], False)):
                sub = Submission(task=TASK, files={"m.py": text}, workspace=ws)
                results = get_default_runner().run_many(grader.jobs(sub))
                if refused:
                    with pytest.raises(RuntimeError, match="grade_many"):
                        grader.score(sub, results)
                else:
                    assert grader.score(sub, results).terms["large"].value == 0.0
                sub.cleanup()
    finally:
        grader.close()


def test_optimised_path_starts_follow_ups_without_waiting_for_slower_submissions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No barrier between rounds: the first submission's follow-up runs while a later,
    slower one's first job still does (the reference path would wait for it)."""
    from forgegym.sandbox.runners import get_default_runner

    runner = get_default_runner()
    if runner.workers < 2:
        pytest.skip("needs two runner slots")
    slow = "import time\n\ndef double(x):\n    time.sleep(1.5)\n    return x\n"
    spans: dict[str, tuple[float, float]] = {}
    run = runner.run

    def timed(job: Any) -> Any:
        start = time.monotonic()
        result = run(job)
        text = Path(job.workdir, "m.py").read_text()
        kind = (
            "slow" if "sleep" in text else "follow-up" if job.calls[0].args == [LARGE] else "fast"
        )
        spans[kind] = (start, time.monotonic())
        return result

    monkeypatch.setattr(runner, "run", timed)
    grader = _Staged()
    try:
        with Workspace(TASK.files, TASK.editable_files) as ws:
            subs = [Submission(task=TASK, files={"m.py": t}, workspace=ws) for t in (FIXED, slow)]
            fixed, wrong = grade_many(grader, subs, runner, optimised=True)
    finally:
        grader.close()
    assert fixed.terms["large"].value == 1.0 and wrong.terms["correct"].value == 0.0
    assert spans["follow-up"][0] < spans["slow"][1], spans


# ------------------------------------------------- result gates and shared runs
FORGED_NOW = "def double(x):\n    return 'forged' if x == 3 else 2 * x\n"
FORGED_LATER = "def double(x):\n    return 2 * x if x < 100 else 'forged'\n"


class _Gating(_Staged):
    """``_Staged`` whose runs can be refused: any call returning ``"forged"`` gates
    ``unsafe``, in the sandbox jobs or in the follow-up; submissions of one patch share
    one run."""

    name = "toy-gating"
    shares_runs = True

    def result_gate(self, submission: Submission, result: Any) -> ResultGate | None:
        values = [result.outcome(i).value for i in range(len(result.outcomes))]
        return ResultGate("unsafe", f"refused: {values}") if "forged" in values else None


def test_a_result_gate_decides_the_breakdown_on_both_paths() -> None:
    from forgegym.grading.batch import Note

    texts = [FIXED, FORGED_NOW, FORGED_LATER, FIXED]
    graded = {}
    for optimised in (False, True):
        grader = _Gating()
        try:
            with Workspace(TASK.files, TASK.editable_files) as ws:
                subs = [Submission(task=TASK, files={"m.py": t}, workspace=ws) for t in texts]
                subs[3].notes.append(Note("review", "same patch, other notes"))
                keys = [grader.execution_key(s) for s in subs]
                graded[optimised] = grade_many(grader, subs, optimised=optimised)
        finally:
            grader.close()
        assert keys[0] == keys[3] and len(set(keys)) == 3  # one patch, one key
    fixed, now, later, again = graded[False]
    assert not fixed.gates and fixed.terms["large"].value == 1.0 and again == fixed
    assert now.gates == ["unsafe"] and now.total == -1.0 and not now.terms
    assert now.notes == ["refused: ['forged', 10]"]
    # Refused in the follow-up round: the sandbox jobs' results cannot outvote it.
    assert later.gates == ["unsafe"] and later.notes == ["refused: ['forged']"]
    assert [b.model_dump() for b in graded[True]] == [b.model_dump() for b in graded[False]]


def test_by_default_nothing_is_shared_or_cut_off_and_hack_notes_are_capped() -> None:
    from forgegym.sandbox.runners import get_default_runner

    grader = _Grader()
    finding = HackFinding(kind="skip_marker", path="t.py", line=1, detail="d")
    try:
        with Workspace(TASK.files, TASK.editable_files) as ws:
            sub = Submission(task=TASK, files={"m.py": FIXED}, workspace=ws)
            assert grader.execution_key(sub) is None
            (result,) = get_default_runner().run_many(grader.jobs(sub))
            assert not grader.cutoff(sub, result)
            sub.cleanup()
        gates, notes = grader.gate_findings(["compile_error"], ["n"], [finding] * 7)
        assert gates == ["hack_flagged", "compile_error"] and len(notes) == 1 + grader.hack_notes
    finally:
        grader.close()
