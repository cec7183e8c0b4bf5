"""Comparing differential-call outcomes."""

from __future__ import annotations

from forgegym.sandbox.jobs import CallOutcome
from forgegym.tasklib.values import same_call_outcome, same_value


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


def test_two_calls_agree_on_equal_values_or_the_same_exception_type() -> None:
    def returned(value: object) -> CallOutcome:
        return CallOutcome(ok=True, value=value)

    def raised(name: str, message: str = "") -> CallOutcome:
        return CallOutcome(ok=False, error_type=name, message=message)

    assert same_call_outcome(returned([1, 2.0]), returned([1, 2.0 + 1e-12]))
    assert not same_call_outcome(returned("kilo-0:"), returned("kilo-0::"))
    assert not same_call_outcome(returned(None), raised("TypeError"))
    assert same_call_outcome(raised("TypeError", "a"), raised("TypeError", "b"))
    assert not same_call_outcome(raised("TypeError"), raised("ValueError"))
