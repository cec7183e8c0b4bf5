"""Performance canaries: the grader's oracle and the visible tests follow a catalogue
bug that is not the starting one (static checks)."""

from __future__ import annotations

from forgegym.envs.performance.canaries import canary_bank, follow_the_tests
from forgegym.envs.performance.catalog import structure
from forgegym.envs.performance.hidden import PerformanceHidden
from forgegym.tasklib.canaries import base_id_of


def test_oracle_and_visible_tests_follow_another_bug() -> None:
    bank = canary_bank()
    for task_id in bank.ids()[::5]:
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        hidden = PerformanceHidden.of(canary)
        bug = canary.metadata["contradiction"]["bug"]
        s = structure(hidden.structure)
        assert hidden.oracle == {s.path: s.buggy_source(bug)}
        assert hidden.oracle != canary.reference == base.reference
        assert hidden.start != f"bug{bug}"
        assert canary.files[s.test_path] != base.files[s.test_path]
        assert canary.files[s.path] == base.files[s.path]
        assert canary.description == base.description  # the contract is unchanged
        assert PerformanceHidden.of(base).oracle == {}
        assert follow_the_tests(canary) is not None and follow_the_tests(base) is None
