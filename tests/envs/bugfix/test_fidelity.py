"""Sandbox fidelity (issue 36): the idiom corpus runs in the sandbox as on the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgegym.envs.bugfix.fidelity import FidelityReport, IdiomRow, measure

IDIOMS = Path(__file__).resolve().parents[2] / "fixtures" / "repos" / "idioms"


@pytest.fixture(scope="module")
def report() -> FidelityReport:
    return measure(IDIOMS)


def test_the_report_counts_agreement_per_idiom() -> None:
    rows = [
        IdiomRow("a", "tests/test_a.py::test_a", "passed", "passed"),
        IdiomRow("b", "tests/test_b.py::test_b", "passed", "error", "runtime policy"),
    ]
    rep = FidelityReport(rows)
    assert (rep.agreeing, rep.total) == (1, 2)
    assert [r.idiom for r in rep.disagreeing()] == ["b"]
    assert "agree: 1/2" in rep.table() and "runtime policy" in rep.table()


@pytest.mark.slow
def test_every_idiom_passes_on_the_host(report: FidelityReport) -> None:
    """The corpus itself: at least 40 idioms, each test passing on the host (a failing
    idiom would make agreement meaningless)."""
    assert report.total >= 40, report.table()
    assert report.host_failures == [], report.table()


@pytest.mark.slow
def test_at_least_39_of_40_idioms_agree(report: FidelityReport) -> None:
    # One idiom may disagree: a signal handler installed by the project itself (the
    # seccomp filter refuses every handler, since a handler is handed frames).
    assert report.agreeing >= report.total - 1, report.table()
