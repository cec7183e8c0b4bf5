"""Independent mutants of the reference refactorings (issue #37): the libcst operator set
of ``benchmarks/refactor_kill_rate.py``, the adequacy inputs it led to (calls leaning on
defaults, list lengths at a number, output boundaries per place), and subtle changes
of references that reached success before them and must not now."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from forgegym.envs.refactor.adequacy import (
    aggregate_boundary_calls,
    aggregate_pool,
    default_arity_calls,
    select_by_output,
)
from forgegym.envs.refactor.adequacy_inputs import dense_calls
from forgegym.envs.refactor.env import RefactorEnv
from tests.envs.refactor.conftest import reference_change_succeeds

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from refactor_kill_rate import OPERATORS, cst_mutants, half_of, pick  # noqa: E402

SOURCE = '''"""Module docstring 1 < 2."""


def summarize(items, scale=2, strict=False, label=None):
    """Docstring with 3 > 1."""
    total = 0
    count = 0
    for item in items:
        if item is None:
            continue
        total += item * scale
        count = count + 1
    if total > 57 and not strict:
        kind = "high"
    elif total <= 10:
        kind = "low"
    else:
        kind = "mid"
    return [kind, min(total, 99), count] if strict else (kind, total)
'''


def test_every_operator_makes_compiling_mutants_that_leave_docstrings_alone() -> None:
    mutants = cst_mutants(SOURCE)
    assert {m.operator for m in mutants} == set(OPERATORS)
    texts = [m.source for m in mutants]
    assert len(set(texts)) == len(texts) and SOURCE not in texts
    for m in mutants:
        compile(m.source, "<mutant>", "exec")
        assert '"""Module docstring 1 < 2."""' in m.source
        assert '"""Docstring with 3 > 1."""' in m.source
    descriptions = {m.description for m in mutants}
    assert "GreaterThan -> GreaterThanEqual (comparison 0)" in descriptions
    assert "constant 57 +1" in descriptions and "constant 57 -1" in descriptions
    assert "+= flipped" in descriptions and "min -> max" in descriptions
    assert "continue -> break" in descriptions and "not dropped" in descriptions
    assert "default of label None -> 0" in descriptions
    assert any(d.startswith("list elements") for d in descriptions)


def test_picking_is_seeded_and_spreads_over_operators() -> None:
    found = [("m.py", m) for m in cst_mutants(SOURCE)]
    chosen = pick(found, 8, "s")
    assert chosen == pick(found, 8, "s")
    assert len({m.operator for _, m in chosen}) == len(OPERATORS)
    assert half_of("key", 0) in ("A", "B")


def test_calls_leaning_on_defaults_drop_only_defaulted_arguments() -> None:
    source = "def record(name, amount=1):\n    pass\n\n\ndef top(n=1):\n    pass\n"
    observed = [("record", ["a", 2]), ("record", ["b", 5]), ("top", [3]), ("other", [1])]
    assert default_arity_calls(source, observed) == [
        ("record", ["a"]),
        ("record", ["b"]),
        ("top", []),
    ]


def test_aggregate_boundaries_put_a_list_length_at_each_number() -> None:
    source = "def f(items):\n    if len(items) > 9:\n        return 1\n    return 0\n"
    calls = aggregate_boundary_calls(source, [("f", [[1, 2]])])
    lengths = {len(args[0]) for _, args in calls if len(set(map(str, args[0]))) == len(args[0])}
    assert {8, 9, 10} <= lengths


def test_output_boundaries_keep_a_total_on_its_threshold_beside_list_items() -> None:
    source = (
        "def f(items):\n    total = sum(items)\n    return {'items': items, 'total': total > 40}\n"
    )
    calls = [("f", [[40, 41, 39]]) for _ in range(6)] + [("f", [[20, 20]])]
    outcomes = [{"v": {"items": [40, 41, 39], "total": 120}}] * 6
    outcomes += [{"v": {"items": [20, 20], "total": 40}}]
    # Items at 39..41 fill their own quota; the total at 40 still gets in.
    assert ("f", [[20, 20]]) in select_by_output(source, calls, outcomes, per_value=3)


def test_the_output_pool_holds_every_one_item_list() -> None:
    source = "def f(items):\n    return sum(items) > 50\n"
    pool = aggregate_pool(source, [("f", [[1, 2]])], seed="s", size=10)
    singles = {args[0][0] for _, args in pool if len(args[0]) == 1}
    assert set(range(-3, 103)) <= singles


def test_dense_lists_collide_after_cleaning_and_repeat() -> None:
    calls = dense_calls([("f", [[1, 2]]), ("g", ["text"])], seed="s")
    assert calls == dense_calls([("f", [[1, 2]])], seed="s")  # seeded; text args ignored
    lists = [args[0] for _, args in calls]
    numbers = [[x for x in xs if x is not None] for xs in lists]
    assert sum(len(set(xs)) < len(xs) for xs in numbers) > len(lists) // 2  # repeats
    # A negative reading next to the value ``abs(x) + 1`` it is cleaned into.
    assert any(x < 0 and abs(x) + 1 in xs for xs in numbers for x in xs)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task_id", "path", "old", "new"),
    [
        # Each reached success with the checks before the kill-rate benchmark's fixes:
        # a threshold on the total a pipeline computes...
        (
            "refactor/reduce_complexity/pipeline_scores/d3v3",
            "pipeline_scores.py",
            "if total > 105:",
            "if total >= 105:",
        ),
        # ... and a length cap the hidden inputs never reached (de-duplicated first).
        (
            "refactor/reduce_complexity/pipeline_samples/d3v0",
            "pipeline_samples.py",
            "if len(items) > 9:",
            "if len(items) >= 9:",
        ),
        (
            "refactor/reduce_complexity/pipeline_samples/d3v0",
            "pipeline_samples.py",
            "[len(items) - 9]",
            "[len(items) + 9]",
        ),
        # Two phases run in the other order (found on the held-out half): only lists
        # where a cleaned negative reading collides with another one tell.
        (
            "refactor/reduce_complexity/pipeline_scores/d2v4",
            "pipeline_scores.py",
            "    items = _drop_missing(items)\n    items = _drop_repeats(items)\n",
            "    items = _drop_repeats(items)\n    items = _drop_missing(items)\n",
        ),
    ],
)
def test_subtle_changes_found_by_the_kill_rate_benchmark_do_not_reach_success(
    refactor_env: RefactorEnv, task_id: str, path: str, old: str, new: str
) -> None:
    assert reference_change_succeeds(refactor_env, task_id, path, old, old)  # the reference
    assert not reference_change_succeeds(refactor_env, task_id, path, old, new)
