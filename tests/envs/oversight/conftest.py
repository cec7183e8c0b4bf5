from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from forgegym.core.task import Task
from forgegym.envs.oversight.actions import ACTIONS, VerdictAction
from forgegym.envs.oversight.bank import OversightBank
from forgegym.envs.oversight.grader import OversightGrader, VerdictSubmission, grade_verdicts
from forgegym.rewards import RewardBreakdown

GradeFn = Callable[[Task, "str | VerdictAction | None"], RewardBreakdown]


def make_verdict(**fields: object) -> VerdictAction:
    parsed = ACTIONS.parse(json.dumps({"action": "verdict", **fields}))
    assert parsed.ok, parsed.error
    action = parsed.actions[0]
    assert isinstance(action, VerdictAction)
    return action


@pytest.fixture(scope="session")
def bank() -> OversightBank:
    return OversightBank()


@pytest.fixture(scope="session")
def grader() -> OversightGrader:
    return OversightGrader()


@pytest.fixture(scope="session")
def verdict() -> Callable[..., VerdictAction]:
    return make_verdict


@pytest.fixture(scope="session")
def grade(grader: OversightGrader) -> GradeFn:
    def run(task: Task, action: str | VerdictAction | None) -> RewardBreakdown:
        if isinstance(action, str):
            parsed = ACTIONS.parse(action)
            assert parsed.ok, parsed.error
            first = parsed.actions[0]
            action = first if isinstance(first, VerdictAction) else None
        return grade_verdicts(grader, [VerdictSubmission(task, action)])[0]

    return run


@pytest.fixture(scope="session")
def ids_by(bank: OversightBank) -> Callable[[str, str | None], list[str]]:
    """Bank ids of one domain with one corruption (``None``: clean)."""

    def pick(domain: str, corruption: str | None) -> list[str]:
        return [
            i
            for i in bank.ids()
            if i.split("/")[1] == domain and bank.corruption_of(i) == corruption
        ]

    return pick
