"""A composed task's reference is confirmed as grading grades it (issue 39).

Three of 37 sampled composed references did not reach success through the env: the
composition trusted the restored module (grading does not: markdown's restored
``blockprocessors.py`` may not call ``sys._getframe``), and it counted as fail-to-pass
tests that fail on the pristine project in today's sandbox (tabulate's numpy tests, whose
dependency the sandbox no longer reaches). A fake sandbox plays both here, on a
two-function project: no sandbox, no build.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from forgegym.envs.bugfix.real import _ProjectBase, build_real_task
from forgegym.envs.bugfix.repo import RepoHidden
from forgegym.sandbox.jobs import PytestJob, PytestResult, RunStatus, TestOutcome, TestRecord
from forgegym.tasklib.factory.compose import compose_project, confirm_composed
from forgegym.tasklib.factory.prepare import prepare_project

SOURCE = """def add(a, b):
    return a + b


def scale(a, n):
    return a * n
"""
TESTS = """import pytest

from calc import add, scale


def test_add():
    assert add(1, 2) == 3


def test_scale():
    assert scale(2, 3) == 6


def test_optional():
    pytest.importorskip("numpy")
"""
ADD, SCALE, OPTIONAL = (f"tests/test_calc.py::test_{n}" for n in ("add", "scale", "optional"))
#: The record was built where numpy was importable: all three passed then.
RECORD = {
    "project": "calc",
    "version": "1.0",
    "requirements": [],
    "passing": [ADD, OPTIONAL, SCALE],
    "collected": [ADD, OPTIONAL, SCALE],
    "time_limit_s": 10.0,
}


class FakeSandbox:
    """Runs no test: ``test_optional`` always skips (numpy is out of reach), the other two
    fail while ``calc.py`` differs from the pristine one, and with ``refuse_untrusted`` a
    ``calc.py`` the job's manifest does not trust ends the worker (as markdown's restored
    module calling ``sys._getframe`` does)."""

    def __init__(self, pristine: str, *, refuse_untrusted: bool, timeouts: int = 0) -> None:
        self.pristine = pristine
        self.refuse_untrusted = refuse_untrusted
        #: the first runs of an untrusted file that run past their limit (a loaded host)
        self.timeouts = timeouts
        #: each run's ``calc.py`` and the sha256 its manifest trusts for it
        self.runs: list[tuple[str, str]] = []

    def run_many(self, jobs: Sequence[PytestJob]) -> list[PytestResult]:
        return [self._run(job) for job in jobs]

    def _run(self, job: PytestJob) -> PytestResult:
        text = (Path(job.workdir) / "calc.py").read_text()
        self.runs.append((text, (job.pristine or {})["calc.py"]))
        trusted = hashlib.sha256(text.encode()).hexdigest() == (job.pristine or {})["calc.py"]
        if self.refuse_untrusted and not trusted:
            return PytestResult(status=RunStatus.CRASHED, detail="worker exited with code 75")
        if self.timeouts and not trusted:
            self.timeouts -= 1
            return PytestResult(status=RunStatus.TIMEOUT)
        broken = text != self.pristine
        records = [
            TestRecord(nodeid=ADD, outcome=TestOutcome.FAILED if broken else TestOutcome.PASSED),
            TestRecord(nodeid=SCALE, outcome=TestOutcome.FAILED if broken else TestOutcome.PASSED),
            TestRecord(nodeid=OPTIONAL, outcome=TestOutcome.SKIPPED),
        ]
        return PytestResult(
            status=RunStatus.COMPLETED, records=records, collected_ids=[ADD, SCALE, OPTIONAL]
        )


def _single(function: str) -> dict[str, Any]:
    mutation = [function, "arithmetic_swap", 0]
    return {
        "id": f"real/calc/1.0/calc.py::{function}:arithmetic_swap:0",
        "project": "calc",
        "version": "1.0",
        "sha256": "0" * 64,
        "kind": "mutant",
        "file": "calc.py",
        "mutation": mutation,
        "f2p": [ADD if function == "add" else SCALE],
        "p2p": [],
        "shown": [ADD if function == "add" else SCALE],
        "modules": ["tests/test_calc.py"],
        "features": {"function_lines": 2, "distance": 1},
        "level": 2,
        "report": "",
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "calc-1.0"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(SOURCE)
    (root / "tests" / "test_calc.py").write_text(TESTS)
    return root


def _compose(project: Path, sandbox: FakeSandbox) -> tuple[list[dict[str, Any]], Any]:
    return compose_project(
        project,
        [_single("add"), _single("scale")],
        RECORD,
        per_kind=1,
        kinds=("mutants_module",),
        runner=sandbox,
    )


def test_a_reference_refused_under_gradings_trust_is_not_kept(project: Path) -> None:
    sandbox = FakeSandbox(SOURCE, refuse_untrusted=True)
    entries, stats = _compose(project, sandbox)
    # the mutant's own run trusts it (as grading's no-op does) and fails both tests; the
    # reference, run with the mutant as the trusted starting file, ends the worker
    assert entries == []
    assert stats.dropped == {"reference_run": 1}
    pristine_sha = hashlib.sha256(SOURCE.encode()).hexdigest()
    first, *later = [trusted for text, trusted in sandbox.runs if text == SOURCE]
    assert first == pristine_sha  # the pristine suite, every file trusted
    assert later and all(trusted != pristine_sha for trusted in later)  # the reference


def test_tests_failing_on_the_pristine_project_are_excluded_not_fail_to_pass(
    project: Path,
) -> None:
    (entry,), stats = _compose(project, FakeSandbox(SOURCE, refuse_untrusted=False))
    assert entry["f2p"] == [ADD, SCALE]
    assert entry["excluded"] == [OPTIONAL] and OPTIONAL not in entry["p2p"]
    assert stats.stale_tests == 1 and stats.kept == {"mutants_module": 1}


def test_confirming_composed_tasks_again(project: Path) -> None:
    (entry,), _ = _compose(project, FakeSandbox(SOURCE, refuse_untrusted=False))
    # as the first composition wrote it: the skipped test counted as fail-to-pass
    old = {**entry, "f2p": [ADD, OPTIONAL, SCALE]}
    old.pop("excluded")
    shows_stale = {**old, "id": old["id"] + "-b", "shown": [OPTIONAL]}
    kept, stats = confirm_composed(
        project, [old, shows_stale], RECORD, runner=FakeSandbox(SOURCE, refuse_untrusted=False)
    )
    assert [e["id"] for e in kept] == [entry["id"]]
    assert kept[0]["f2p"] == [ADD, SCALE] and kept[0]["excluded"] == [OPTIONAL]
    assert kept[0]["features"]["n_fail"] == 2
    assert stats.dropped == {"shown_excluded": 1}
    refused, stats = confirm_composed(
        project, [old], RECORD, runner=FakeSandbox(SOURCE, refuse_untrusted=True)
    )
    assert refused == [] and stats.dropped == {"reference_run": 1}


def test_the_bank_never_grades_an_entrys_excluded_tests(project: Path) -> None:
    (entry,), _ = _compose(project, FakeSandbox(SOURCE, refuse_untrusted=False))
    prepared = prepare_project(project, requirements=[])
    base = _ProjectBase(
        prepared=prepared,
        visible_tests=("tests/test_calc.py",),
        editable=("calc.py",),
        test_imports={"tests/test_calc.py": ["calc.py"]},
        passing=tuple(RECORD["passing"]),
        collected=tuple(RECORD["collected"]),
        time_limit_s=10.0,
    )
    task = build_real_task(entry, base)
    hidden = RepoHidden.model_validate(task.hidden)
    assert OPTIONAL in hidden.excluded and OPTIONAL not in hidden.passing_tests
    assert hidden.failing_tests == [ADD, SCALE]
    assert task.reference == {"calc.py": SOURCE}


def test_a_reference_run_past_its_limit_is_tried_once_more(project: Path) -> None:
    (entry,), _ = _compose(project, FakeSandbox(SOURCE, refuse_untrusted=False, timeouts=1))
    assert entry["f2p"] == [ADD, SCALE]
    _, stats = _compose(project, FakeSandbox(SOURCE, refuse_untrusted=False, timeouts=2))
    assert stats.dropped == {"reference_run": 1}
