"""Inputs derived from a task's own code: boundary values on the compared argument,
hypothesis draws from observed types (seeded), and sequences of varied length."""

from __future__ import annotations

import json

from forgegym.tasklib.inputs import (
    boundary_calls,
    code_constants,
    operation_sequences,
    property_calls,
)

SOURCE = """
THRESHOLD = 40


def grade(score, bonus):
    total = score + bonus
    if total >= THRESHOLD:
        return "pass"
    return "fail"


def head(items, word):
    if len(items) > 5:
        items = items[:3]
    if word == "stop":
        return None
    return [v for v in items if v < 7]


def edges(pairs):
    for u, w in pairs:
        if w < 0:
            raise ValueError(w)
    return len(pairs)
"""

CALLS = [
    ("grade", [10, 2]),
    ("grade", [90, 0]),
    ("head", [[1, 2], "go"]),
    ("head", [[9, 8, 7, 6, 5, 4, 3], "go"]),
    ("edges", [[[1, 4], [2, 5]]]),
]


def test_constants_are_traced_to_the_parameters_they_are_compared_with() -> None:
    found = code_constants(SOURCE)
    assert 40 in found["grade"].numbers[0] and 40 in found["grade"].numbers[1]
    assert {5, 3, 7} <= found["head"].numbers[0]
    assert "stop" in found["head"].strings[1]
    assert 0 in found["edges"].numbers[0]


def test_boundary_calls_put_each_constant_at_its_edge() -> None:
    calls = boundary_calls(SOURCE, CALLS, seed=1)
    grade_scores = {a[0] for f, a in calls if f == "grade"}
    assert {39, 40, 41} <= grade_scores
    lengths = {len(a[0]) for f, a in calls if f == "head"}
    assert {4, 5, 6} <= lengths
    assert any(a[1] == "stop" for f, a in calls if f == "head")
    # A nested element compared with 0 gets -1, 0 and 1.
    weights = {w for f, a in calls if f == "edges" for _, w in a[0]}
    assert {-1, 0, 1} <= weights
    # Never a call the checks already make; always JSON-plain.
    assert not {json.dumps(c) for c in calls} & {json.dumps(c) for c in CALLS}
    json.dumps(calls)


def test_property_calls_follow_the_observed_types_and_are_seeded() -> None:
    first = property_calls(SOURCE, CALLS, seed=7, per_function=5, time_budget_s=600)
    again = property_calls(SOURCE, CALLS, seed=7, per_function=5, time_budget_s=600)
    assert first == again
    assert {f for f, _ in first} == {"grade", "head", "edges"}
    for function, args in first:
        if function == "grade":
            assert all(type(a) is int for a in args)
        if function == "head":
            assert isinstance(args[0], list) and isinstance(args[1], str)
    assert property_calls(SOURCE, CALLS, seed=8, per_function=5, time_budget_s=600) != first


def test_operation_sequences_reach_the_asked_lengths_and_let_one_function_dominate() -> None:
    sequences = operation_sequences(CALLS, seed=3, lengths=(5, 64), per_length=3)
    assert sorted(len(s) for s in sequences) == [5, 5, 5, 64, 64, 64]
    long = [s for s in sequences if len(s) == 64]
    assert any(
        max(sum(f == g for f, _ in s) for g in ("grade", "head", "edges")) > 40 for s in long
    )
    assert operation_sequences(CALLS, seed=3, lengths=(5, 64), per_length=3) == sequences


UNITS = """
def size(value, binary=False):
    base = 1024 if binary else 1000
    if value < base:
        return "%d B" % value
    for i in range(2, 6):
        unit = base ** i
        if value < unit:
            break
    return "%.1f" % (value / (unit / base))
"""


def test_locals_bound_to_constants_and_their_powers_are_boundaries() -> None:
    # `base` is one of two literals, `unit` a power of it: both are compared with the
    # argument, so their values (the powers included) are its boundaries.
    numbers = code_constants(UNITS)["size"].numbers[0]
    assert {1000, 1024, 1000**2, 1024**3, 1000**8} <= numbers
    assert 1000**9 not in numbers  # powers stop at the eighth


def test_the_boundary_budget_spreads_over_every_observed_call_shape() -> None:
    # Enough constants to fill the per-function budget from the first call shape alone:
    # the binary calls (second shape) must still get the 1024 edge.
    calls = [("size", [3000]), ("size", [5]), ("size", [3000, True]), ("size", [5, True])]
    out = boundary_calls(UNITS, calls, per_function=30, seed=0)
    assert len(out) == 30
    assert {1023, 1024, 1025} <= {a[0] for _, a in out if len(a) == 2}
    assert {999, 1000, 1001} <= {a[0] for _, a in out if len(a) == 1}
