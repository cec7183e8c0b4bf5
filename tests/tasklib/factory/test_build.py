"""The factory's reference check (design note 004, D9) runs what grading runs (issue 39).

markdown's 146 tasks passed the check and crashed when graded: the check ran each task's
own (covering) test files, grading runs those of the fail-to-pass tests and every test
file importing the changed module, and a file importing ``blockprocessors.py`` without
covering the mutated function took ``sys._getframe`` with the restored module on the
stack. A fake sandbox plays that here on a two-test-file project: no sandbox, no build.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from forgegym.sandbox.jobs import PytestJob, PytestResult, RunStatus, TestOutcome, TestRecord
from forgegym.tasklib.factory.build import _confirm_references
from forgegym.tasklib.factory.prepare import prepare_project
from forgegym.tasklib.project import graded_test_files, imports_of_tests

SOURCE = """def add(a, b):
    return a + b


def quote(text):
    return "> " + text
"""
#: covers ``add``: the only file the mutant's tests are in
TEST_CALC = """from calc import add


def test_add():
    assert add(1, 2) == 3
"""
#: imports ``calc`` without calling ``add``: grading runs it when ``calc.py`` changes
TEST_QUOTE = """import calc


def test_quote():
    assert calc.quote("a") == "> a"
"""
ADD = "tests/test_calc.py::test_add"
QUOTE = "tests/test_quote.py::test_quote"


class IntrospectingSandbox:
    """Runs no test: every test passes, except that ``test_quote.py`` ends the worker
    when ``calc.py`` is not trusted (as markdown's ``BlockQuoteProcessor.test`` does with
    the restored module on the stack of ``sys._getframe``)."""

    def __init__(self) -> None:
        #: the targets of each run
        self.targets: list[list[str]] = []

    def run_many(self, jobs: Sequence[PytestJob]) -> list[PytestResult]:
        return [self._run(job) for job in jobs]

    def _run(self, job: PytestJob) -> PytestResult:
        self.targets.append(list(job.targets))
        text = (Path(job.workdir) / "calc.py").read_bytes()
        trusted = (job.pristine or {}).get("calc.py") == hashlib.sha256(text).hexdigest()
        if "tests/test_quote.py" in job.targets and not trusted:
            return PytestResult(
                status=RunStatus.CRASHED,
                detail="worker exited with code 75",
                stderr_tail="refused: sys._getframe with changed code on the stack\n",
            )
        ids = [t for t in (ADD, QUOTE) if t.partition("::")[0] in job.targets]
        records = [TestRecord(nodeid=t, outcome=TestOutcome.PASSED) for t in ids]
        return PytestResult(status=RunStatus.COMPLETED, records=records, collected_ids=ids)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "calc-1.0"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(SOURCE)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / "tests" / "test_quote.py").write_text(TEST_QUOTE)
    return root


def _entry() -> dict[str, Any]:
    """A mutant of ``add``, confirmed by its covering file ``test_calc.py`` alone."""
    return {
        "id": "real/calc/1.0/calc.py::add:arithmetic_swap:0",
        "file": "calc.py",
        "f2p": [ADD],
        "p2p": [],
        "modules": ["tests/test_calc.py"],
    }


def test_the_reference_check_runs_the_files_grading_runs(project: Path) -> None:
    prepared = prepare_project(project, requirements=[])
    sandbox = IntrospectingSandbox()
    kept, refused = _confirm_references(sandbox, prepared, [_entry()], 10.0, [ADD, QUOTE], {})
    # grading's selection, by the function grading itself calls
    visible = list(prepared.test_files)
    imports = imports_of_tests(prepared.files, prepared.layout.import_paths, visible)
    graded = graded_test_files(visible, [ADD], ["calc.py"], imports)
    assert graded == ["tests/test_calc.py", "tests/test_quote.py"]
    assert sandbox.targets == [graded]
    assert kept == []
    assert refused[_entry()["id"]].startswith("crashed: refused: sys._getframe")


def test_a_test_file_left_out_of_grading_is_left_out_of_the_check(project: Path) -> None:
    prepared = prepare_project(project, requirements=[])
    sandbox = IntrospectingSandbox()
    left_out = {"tests/test_quote.py": "ids change beside the other files"}
    kept, refused = _confirm_references(sandbox, prepared, [_entry()], 10.0, [ADD], left_out)
    assert sandbox.targets == [["tests/test_calc.py"]]
    assert [e["id"] for e in kept] == [_entry()["id"]] and refused == {}


def test_grading_selects_failing_files_and_importers_of_a_changed_module() -> None:
    imports = {"t/a.py": ["pkg/x.py"], "t/b.py": ["pkg/y.py"], "t/c.py": ["pkg/x.py", "pkg/y.py"]}
    files = ["t/a.py", "t/b.py", "t/c.py"]
    assert graded_test_files(files, ["t/b.py::test_1"], ["pkg/x.py"], imports) == files
    assert graded_test_files(files, ["t/b.py::test_1"], [], imports) == ["t/b.py"]
    assert graded_test_files(files, [], ["pkg/y.py"], imports) == ["t/b.py", "t/c.py"]
