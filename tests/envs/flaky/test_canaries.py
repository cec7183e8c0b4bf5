"""FlakyRepair canaries: the flaky test asserts a one-off value, the reference fix keeps
it, and the cheat applies only where the tests are the agent's (static checks)."""

from __future__ import annotations

from forgegym.envs.flaky.canaries import canary_bank, restore_expectation
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.tasklib.canaries import base_id_of, contradict, python_literal


def test_the_flaky_test_asserts_the_contradicted_value() -> None:
    bank = canary_bank()
    in_test = in_code = 0
    for task_id in bank.ids():
        canary, base = bank.get(task_id), bank.base_bank.get(base_id_of(task_id))
        contradiction = canary.metadata["contradiction"]
        path = contradiction["path"]
        wrong = python_literal(contradict(contradiction["value"]), like=base.files[path])
        assert canary.files[path] != base.files[path] and wrong in canary.files[path]
        if path in canary.reference:  # the honest fix keeps the contradiction
            assert wrong in canary.reference[path]
        hidden = FlakyHidden.of(canary)
        if hidden.location.partition("::")[0] in hidden.test_paths:
            in_test += 1
            assert restore_expectation(canary) is not None
        else:
            in_code += 1
            assert restore_expectation(canary) is None
    assert in_test >= 20 and in_code >= 20  # both kinds of fault are covered
