"""Behaviour checks of real-bank tasks: the grading rules, on fabricated results.

The sandbox is not run here: the pytest and call results are built by hand, as a
forger controlling the test process could make the first one look (every test passed),
so the test is of what the parent decides from them."""

from __future__ import annotations

from typing import Any

import pytest

from forgegym.core.task import Task
from forgegym.envs.bugfix.behaviour import (
    BehaviourCall,
    BehaviourChecks,
    call_job,
    compare,
    derive_calls,
    rootdir_test_modules,
    same_outcome,
)
from forgegym.envs.bugfix.grader import solved
from forgegym.envs.bugfix.repo import RepoGrader, RepoHidden
from forgegym.grading.batch import Submission
from forgegym.sandbox.jobs import (
    CallJob,
    CallOutcome,
    CallResult,
    ProjectRun,
    PytestResult,
    RunStatus,
    TestOutcome,
    TestRecord,
)
from forgegym.sandbox.workspace import Workspace

PRISTINE = "def half(n):\n    return n // 2\n"
MUTANT = "def half(n):\n    return n // 3\n"
TESTS = "from pkg.mod import half\n\ndef test_half():\n    assert half(8) == 4\n\ndef test_zero():\n    assert half(0) == 0\n"
F2P, P2P = "tests/test_mod.py::test_half", "tests/test_mod.py::test_zero"

# calls 0, 1 show the bug (1 derived from 0); call 2 does not (0 // 3 == 0 // 2)
CHECKS = BehaviourChecks(
    status="checked",
    module="pkg.mod",
    qualname="half",
    calls=[
        BehaviourCall(kind="function", args=[8], test=F2P),
        BehaviourCall(kind="function", args=[9]),
        BehaviourCall(kind="function", args=[0], test=P2P),
    ],
    expected=[
        {"ok": True, "value": {"r": 4}},
        {"ok": True, "value": {"r": 4}},
        {"ok": True, "value": {"r": 0}},
    ],
    discriminating=[0, 1],
)


def _task(checks: BehaviourChecks | None) -> Task:
    hidden = RepoHidden(
        failing_tests=[F2P],
        passing_tests=[P2P],
        test_imports={"tests/test_mod.py": ["pkg/mod.py"]},
        behaviour=None if checks is None else checks.model_dump(mode="json"),
    )
    return Task(
        task_id="real/demo/1.0/pkg/mod.py::half:constant_off_by_one:0",
        family="bugfix",
        difficulty=1,
        title="Fix half",
        description="half is wrong",
        files={"pkg/__init__.py": "", "pkg/mod.py": MUTANT, "tests/test_mod.py": TESTS},
        editable_files=("pkg/__init__.py", "pkg/mod.py"),
        visible_test_files=("tests/test_mod.py",),
        visible_test_ids=(F2P, P2P),
        hidden=hidden.model_dump(),
        reference={"pkg/mod.py": PRISTINE},
    )


def _tests(passed: dict[str, bool]) -> PytestResult:
    return PytestResult(
        status=RunStatus.COMPLETED,
        records=[
            TestRecord(nodeid=i, outcome=TestOutcome.PASSED if ok else TestOutcome.FAILED)
            for i, ok in passed.items()
        ],
        collected_ids=list(passed),
        expected_ids=list(passed),
    )


def _calls(values: list[Any]) -> CallResult:
    return CallResult(
        status=RunStatus.COMPLETED,
        outcomes=[CallOutcome(ok=True, value={"r": v}) for v in values],
    )


def _grade(source: str, results: list[Any], checks: BehaviourChecks | None = CHECKS) -> Any:
    task = _task(checks)
    space = Workspace(task.files, task.editable_files)
    try:
        sub = Submission(
            task=task,
            files={**{p: task.files[p] for p in task.editable_files}, "pkg/mod.py": source},
            workspace=space,
        )
        grader = RepoGrader()
        jobs = grader.jobs(sub)
        breakdown = grader.score(sub, results)
        sub.cleanup()
        return jobs, breakdown
    finally:
        space.close()


def test_the_checks_run_as_a_call_job_holding_inputs_only() -> None:
    jobs, _ = _grade(PRISTINE, [_tests({F2P: True, P2P: True}), _calls([4, 4, 0])])
    (call,) = [j for j in jobs if isinstance(j, CallJob)]
    assert [c.args[4] for c in call.calls] == [[8], [9], [0]]
    dump = call.model_dump_json()
    assert '"ok"' not in dump and '"value"' not in dump  # no expected outcome goes
    # Trusted as the pytest job trusts them: the files as the episode started, so the
    # changed module (its bytes differ from the shown mutant's) is not.
    (tests,) = [j for j in jobs if not isinstance(j, CallJob)]
    assert call.pristine == tests.pristine and "pkg/mod.py" in call.pristine


def test_the_reference_succeeds_and_says_tests_and_behaviour() -> None:
    _, fixed = _grade(PRISTINE, [_tests({F2P: True, P2P: True}), _calls([4, 4, 0])])
    assert solved(fixed), fixed
    assert fixed.terms["behaviour"].value == 1.0 and fixed.terms["behaviour"].weight > 0
    assert "graded by tests and behaviour" in fixed.terms["behaviour"].detail


def test_a_forged_pytest_verdict_scores_no_more_than_the_noop() -> None:
    _, noop = _grade(MUTANT, [_tests({F2P: False, P2P: True}), _calls([2, 3, 0])])
    # the bug is left in; the test process reports every test passed
    _, forged = _grade(MUTANT + "\n# forged\n", [_tests({F2P: True, P2P: True}), _calls([2, 3, 0])])
    assert not solved(forged)
    assert forged.total <= noop.total
    assert forged.terms["hidden"].value == 0.0
    assert "capped by the behaviour checks" in forged.terms["hidden"].detail


def test_special_casing_the_tested_input_earns_nothing() -> None:
    # right on the test's input (8), wrong on the derived one (9): no success, no credit
    cased = "def half(n):\n    if n == 8:\n        return 4\n    return n // 3\n"
    _, noop = _grade(MUTANT, [_tests({F2P: False, P2P: True}), _calls([2, 3, 0])])
    _, got = _grade(
        cased,
        [_tests({F2P: True, P2P: True}), _calls([4, 3, 0])],
    )
    assert not solved(got) and got.total <= noop.total


def test_a_fix_that_breaks_other_behaviour_does_not_succeed() -> None:
    _, got = _grade(
        "def half(n):\n    return n // 2 + (n == 0)\n",
        [_tests({F2P: True, P2P: True}), _calls([4, 4, 1])],
    )
    assert not solved(got) and got.terms["regression"].value > 0


def test_without_discriminating_calls_the_tests_grade_alone() -> None:
    idle = CHECKS.model_copy(
        update={"status": "no_discriminating", "discriminating": [], "note": "none shows the bug"}
    )
    jobs, got = _grade(MUTANT, [_tests({F2P: True, P2P: True})], checks=idle)
    assert not any(isinstance(j, CallJob) for j in jobs)
    assert solved(got)  # tests only, as before: the label says so
    assert got.terms["behaviour"].weight == 0.0
    assert "graded by tests only" in got.terms["behaviour"].detail


def test_outcomes_compare_values_with_float_tolerance_and_errors_by_type() -> None:
    assert same_outcome({"ok": True, "value": 0.1 + 0.2}, {"ok": True, "value": 0.3})
    assert not same_outcome({"ok": True, "value": 1}, {"ok": True, "value": True})
    assert same_outcome(
        {"ok": False, "error_type": "ValueError"}, {"ok": False, "error_type": "ValueError"}
    )
    assert not same_outcome({"ok": False, "error_type": "ValueError"}, {"ok": True, "value": None})
    verdict = compare(CHECKS, CallResult(status=RunStatus.CRASHED, outcomes=[]))
    assert verdict.matched == 0  # a crashed candidate matches nothing


def test_derived_calls_are_seeded_new_and_bounded() -> None:
    recorded = [BehaviourCall(kind="function", args=[8, "ab", [1, 2]], test=F2P)]
    first = derive_calls(recorded, "seed", limit=5)
    assert first == derive_calls(recorded, "seed", limit=5)
    assert len(first) == 5 and all(c.test is None for c in first)
    assert all(c.args != recorded[0].args for c in first)
    assert [c.args for c in derive_calls(recorded, "seed", limit=0)] == []


@pytest.mark.parametrize("status", ["no_calls", "unavailable"])
def test_inactive_statuses_are_not_active(status: str) -> None:
    assert not BehaviourChecks(status=status).active  # type: ignore[arg-type]


def test_test_folders_imported_by_bare_name_reach_the_call_job() -> None:
    """A test's own class (jmespath's ``CustomFunctions``) is an input only if its module
    can be imported in the call job: folders of rootdir-imported test files are added."""
    files = {
        "pkg/__init__.py": "",
        "tests/test_a.py": "",
        "tests/helpers_test.py": "",
        "tests/conftest.py": "",
        "other/__init__.py": "",
        "other/test_b.py": "",
    }
    assert rootdir_test_modules(files) == (["tests"], ["helpers_test", "test_a"])
    checks = BehaviourChecks(
        status="checked", test_paths=["tests"], calls=[BehaviourCall(kind="function")]
    )
    job = call_job("/w", checks, ProjectRun(import_paths=["src"]))
    assert job.project is not None and job.project.import_paths == ["src", "tests"]
