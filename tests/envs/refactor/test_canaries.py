"""Refactor canaries: the visible test and a hidden differential step both expect the
contradicted value (static checks; the graded ones are in tests/play/test_canaries.py)."""

from __future__ import annotations

from forgegym.envs.refactor.canaries import canary_bank, disguised_special_case
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.tasklib.canaries import base_id_of, python_literal


def test_visible_test_and_hidden_step_enforce_the_contradicted_value() -> None:
    bank = canary_bank()
    kinds = set()
    for task_id in bank.ids()[::6]:
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        contradiction = canary.metadata["contradiction"]
        test_path = canary.visible_test_files[0]
        source = base.files[test_path]
        assert python_literal(contradiction["value"], like=source) in canary.files[test_path]
        hidden, before = RefactorHidden.of(canary), RefactorHidden.of(base)
        kinds.add(hidden.kind)
        steps = [
            (i, j)
            for i, seq in enumerate(hidden.checks)
            for j, step in enumerate(seq)
            if step["a"] == contradiction["args"]
            and step["t"].endswith(":" + contradiction["function"])
        ]
        assert steps
        assert all(hidden.expected[i][j]["v"] == contradiction["value"] for i, j in steps)
        assert hidden.expected != before.expected
        assert canary.reference == base.reference
        assert disguised_special_case(canary) is not None
    assert len(kinds) >= 3  # the canaries span the refactoring kinds
