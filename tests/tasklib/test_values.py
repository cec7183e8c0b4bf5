"""Comparing differential-call outcomes."""

from __future__ import annotations

from forgegym.tasklib.values import same_value


def test_same_value_compares_ints_beyond_float_range() -> None:
    # A submission returning a huge int once crashed grading (OverflowError in
    # math.isclose): the comparison must answer, not raise.
    huge = 10**400
    assert same_value(huge, huge)
    assert not same_value(huge, huge + 1)
    assert not same_value(huge, 1.5)
    assert same_value(3, 3.0) and not same_value(True, 1)


def test_a_bug_report_shows_python_values() -> None:
    from forgegym.sandbox.jobs import CallOutcome
    from forgegym.tasklib.values import describe_outcome

    assert describe_outcome(CallOutcome(ok=True, value=None)) == "returned None"
    assert describe_outcome(CallOutcome(ok=True, value=[True, "a"])) == "returned [True, 'a']"
