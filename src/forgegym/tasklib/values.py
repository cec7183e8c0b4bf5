"""Comparing a child's differential-call outcomes with the reference's (trusted parent)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from forgegym.sandbox.jobs import CallJob, CallOutcome, CallResult, CallSpec
from forgegym.tasklib.corpus import HiddenCall

__all__ = ["call_job", "describe_outcome", "hidden_verdicts", "same_call_outcome", "same_value"]


def same_value(a: Any, b: Any) -> bool:
    """Structural equality of JSON-plain values: bools are not numbers, ints and floats
    compare numerically (tolerance 1e-9), containers element-wise."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        try:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or a == b
        except OverflowError:  # an int beyond float range: only exact equality is known
            return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def same_call_outcome(a: CallOutcome, b: CallOutcome) -> bool:
    """Whether two calls did the same: both returned equal values (:func:`same_value`),
    or both raised exceptions of the same type."""
    if a.ok or b.ok:
        return a.ok and b.ok and same_value(a.value, b.value)
    return a.error_type == b.error_type


def call_job(module: str, calls: Sequence[HiddenCall], workdir: str, timeout_s: float) -> CallJob:
    """A job calling ``module:function(*args)`` for every hidden call, in ``workdir``."""
    return CallJob(
        workdir=workdir,
        calls=[CallSpec(target=f"{module}:{c.function}", args=list(c.args)) for c in calls],
        timeout_s=timeout_s,
        per_call_timeout_s=min(2.0, timeout_s),
    )


def _matches(call: HiddenCall, outcome: CallOutcome) -> bool:
    if "raises" in call.expected:
        return not outcome.ok and outcome.error_type == call.expected["raises"]
    return outcome.ok and same_value(outcome.value, call.expected["value"])


def hidden_verdicts(calls: Sequence[HiddenCall], result: CallResult) -> list[bool]:
    """Per call: does the candidate's outcome equal the reference's? A crash, a timeout
    or a missing outcome is a failure."""
    return [_matches(call, result.outcome(i)) for i, call in enumerate(calls)]


def describe_outcome(outcome: CallOutcome | dict[str, Any]) -> str:
    """How a user would describe what a call did: ``returned X`` / ``raised T: msg``, with
    values as Python shows them (``None``, ``True``)."""
    if isinstance(outcome, CallOutcome):
        if outcome.ok:
            return f"returned {outcome.value!r}"  # as Python shows it: None, True
        return f"raised {outcome.error_type}" + (f": {outcome.message}" if outcome.message else "")
    if "raises" in outcome:
        return f"raise {outcome['raises']}"
    return f"return {outcome['value']!r}"
