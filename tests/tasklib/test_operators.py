"""The independent mutation operator set: each operator's mutants, site addressing,
and that it reaches code the generators' engine does not (methods, private helpers,
module-level thresholds, every comparison of a chain)."""

from __future__ import annotations

import ast

import pytest

from forgegym.tasklib.operators import OPERATOR_NAMES, Site, apply_site, enumerate_sites, mutants

SOURCE = '''
"""Docstring 7."""
LIMIT = 10


class Stack:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)

    def pop(self):
        return self.items.pop()


def _clip(value, low=0, high=LIMIT):
    if value < low:
        return low
    elif value > high:
        return high
    else:
        return value


def window(items, start, stop):
    return items[start:stop] if 0 <= start <= stop else []


def spread(a, b):
    return max(a, b) - min(a, b)
'''


def _bodies(operator: str) -> set[str]:
    return {m.source for m in mutants(SOURCE, (operator,))}


def _contains(operator: str, fragment: str) -> bool:
    return any(fragment in source for source in _bodies(operator))


def test_every_operator_has_sites_here() -> None:
    found = {s.operator for s in enumerate_sites(SOURCE)}
    assert found == set(OPERATOR_NAMES)


def test_relational_boundaries_cover_every_comparison_of_a_chain() -> None:
    assert _contains("relational", "0 < start <= stop")
    assert _contains("relational", "0 <= start < stop")
    assert _contains("relational", "value <= low")
    assert _contains("relational", "value >= high")


def test_constants_move_both_ways_including_module_thresholds() -> None:
    assert _contains("constant", "LIMIT = 9")
    assert _contains("constant", "LIMIT = 11")
    # Docstrings are not behaviour.
    assert not _contains("constant", "Docstring 8")


def test_container_order_in_methods() -> None:
    assert _contains("order", "self.items.pop(0)")
    assert _contains("order", "self.items.insert(0, item)")


def test_defaults_swaps_and_dropped_else() -> None:
    assert _contains("default", "low=-1")
    assert _contains("default", "low=1")
    assert _contains("swap", "min(b, a)")
    assert _contains("swap", "min(a, b) - max(a, b)")
    dropped = _bodies("drop_else")
    assert any("elif" not in s and "value > high" not in s for s in dropped)
    assert any("return items[start:stop]\n" in s for s in dropped)


def test_mutants_compile_differ_and_are_addressed_by_site() -> None:
    found = mutants(SOURCE)
    baseline = ast.unparse(ast.parse(SOURCE))
    assert len({m.source for m in found}) == len(found) >= 20
    for mutant in found:
        compile(mutant.source, "<m>", "exec")
        assert mutant.source != baseline
        assert apply_site(SOURCE, mutant.site).source == mutant.source


def test_unknown_sites_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown operator"):
        apply_site(SOURCE, Site("nope", 0))
    with pytest.raises(ValueError, match="no site"):
        apply_site(SOURCE, Site("relational", 999))
