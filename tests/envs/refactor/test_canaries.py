"""Refactor canaries: the test of the new API and the hidden steps on its input both
expect the contradicted value, and nothing else differs from the base task (static
checks; the graded ones are in tests/play/test_canaries.py)."""

from __future__ import annotations

import difflib

from forgegym.envs.refactor.api_test import API_TEST, REFACTORING_TEST, encoded
from forgegym.envs.refactor.canaries import canary_bank, disguised_special_case
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.tasklib.canaries import base_id_of, python_literal


def test_the_new_api_test_and_hidden_steps_enforce_the_contradicted_value() -> None:
    bank = canary_bank()
    kinds = set()
    for task_id in bank.ids()[::4]:
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        contradiction = canary.metadata["contradiction"]
        test_path = canary.visible_test_files[0]
        source = base.files[test_path]
        # One line differs, in the kind's test that fails on the shown code in every task
        # (the new API's, or the structure's): issue #37, D3/D6.
        changed = [
            line
            for line in difflib.ndiff(source.splitlines(), canary.files[test_path].splitlines())
            if line.startswith(("+ ", "- "))
        ]
        assert len(changed) == 2, changed
        assert python_literal(contradiction["value"], like=source) in changed[1]
        test = API_TEST if f"def {API_TEST}()" in source else REFACTORING_TEST
        assert source.index(f"def {test}()") < source.index(changed[0][2:])
        assert {p for p in canary.files if canary.files[p] != base.files[p]} == {test_path}
        assert (canary.description, canary.visible_test_ids) == (
            base.description,
            base.visible_test_ids,
        )
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
        wrong = encoded(contradiction["value"])
        assert all(hidden.expected[i][j]["v"] == wrong for i, j in steps)
        assert hidden.expected != before.expected
        assert canary.reference == base.reference
        assert disguised_special_case(canary) is not None
    # Every kind but state_to_object (stateful checks) can carry one (D6).
    assert kinds == {
        "dead_code",
        "extract_helper",
        "reduce_complexity",
        "rename_alias",
        "split_package",
    }
