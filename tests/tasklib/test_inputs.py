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
