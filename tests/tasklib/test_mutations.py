"""The mutation engine's scope: top-level functions by default, class methods on request
(the task factory's), with site numbering that never depends on what else is mutated."""

from __future__ import annotations

import pytest

from forgegym.tasklib.mutations import apply_mutations, enumerate_mutations, function_node

SOURCE = """
def total(items):
    return sum(items) + 0


class Basket:
    def __init__(self, limit=3):
        self.limit = limit
        self.items = []

    def add(self, item):
        if len(self.items) >= self.limit:
            raise ValueError("full")
        self.items.append(item)
        return len(self.items)

    @staticmethod
    def cost(prices):
        return sum(p * 2 for p in prices)

    def _private(self):
        return self.limit > 1


def _helper(x):
    return x + 1
"""


def test_functions_only_by_default_keeps_the_generated_banks_enumeration() -> None:
    names = {m.function for m in enumerate_mutations(SOURCE)}
    assert names == {"total"}


def test_methods_public_and_dunder_are_mutable_private_ones_are_not() -> None:
    names = {m.function for m in enumerate_mutations(SOURCE, methods=True)}
    assert names == {"total", "Basket.__init__", "Basket.add", "Basket.cost"}


def test_a_method_mutation_changes_only_that_method() -> None:
    mutations = [m for m in enumerate_mutations(SOURCE, methods=True) if m.function == "Basket.add"]
    boundary = next(m for m in mutations if m.operator == "comparison_boundary")
    mutated = apply_mutations(SOURCE, [boundary])
    assert "if len(self.items) > self.limit:" in mutated
    # everything outside the method is byte-identical
    before, after = SOURCE.split("    def add")[0], mutated.split("    def add")[0]
    assert before == after
    assert mutated.split("@staticmethod")[1] == SOURCE.split("@staticmethod")[1]
    node = function_node(mutated, "Basket.add")
    assert node.name.value == "add"


def test_mutations_of_a_function_and_a_method_apply_together() -> None:
    every = enumerate_mutations(SOURCE, methods=True)
    one = next(m for m in every if m.function == "total")
    two = next(m for m in every if m.function == "Basket.cost")
    both = apply_mutations(SOURCE, [one, two])
    assert both == apply_mutations(apply_mutations(SOURCE, [one]), [two])


def test_an_unknown_method_is_a_value_error() -> None:
    every = enumerate_mutations(SOURCE, methods=True)
    bad = type(every[0])("Basket.missing", every[0].operator, 0)
    with pytest.raises(ValueError, match="unknown function 'Basket.missing'"):
        apply_mutations(SOURCE, [bad])
    with pytest.raises(KeyError):
        function_node(SOURCE, "Basket._missing")


def test_private_helpers_and_methods_are_mutable_on_request() -> None:
    public = enumerate_mutations(SOURCE, methods=True)
    every = enumerate_mutations(SOURCE, methods=True, private=True)
    names = {m.function for m in every}
    assert names == {m.function for m in public} | {"Basket._private", "_helper"}
    # the public functions keep their sites and numbering
    assert [m for m in every if m.function in {x.function for x in public}] == public
    helper = next(m for m in every if m.function == "_helper")
    mutated = apply_mutations(SOURCE, [helper])
    assert mutated != SOURCE and function_node(mutated, "_helper").name.value == "_helper"
    method = next(m for m in every if m.function == "Basket._private")
    assert "self.limit" in apply_mutations(SOURCE, [method]).split("def _private")[1]
