"""Refactor tasks from a user's own module (:func:`forgegym.envs.refactor.user.refactor_task`)."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401 - registers the envs
from forgegym.core.task import TaskList
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.envs.refactor.user import refactor_spec, refactor_task

BEFORE = """
def grade(score):
    if score >= 90:
        return "A"
    elif score >= 80:
        return "B"
    return "C"


def labels(scores):
    out = []
    for s in scores:
        if s >= 90:
            out.append("A")
        elif s >= 80:
            out.append("B")
        else:
            out.append("C")
    return out
"""

AFTER = """
def grade(score):
    if score >= 90:
        return "A"
    elif score >= 80:
        return "B"
    return "C"


def labels(scores):
    return [grade(s) for s in scores]
"""

CALLS: list[tuple[str, list[Any]]] = [("grade", [85]), ("labels", [[95, 10, 75]])]
STRUCTURE = [{"req": "function_complexity", "function": "labels", "bound": 2}]


def _submit(env: Any, content: str) -> dict[str, Any]:
    env.reset(seed=0)
    action = [
        {"action": "edit", "edits": [{"path": "grades.py", "content": content}]},
        {"action": "submit"},
    ]
    _, _, _, _, info = env.step("```json\n" + json.dumps(action) + "\n```")
    return info


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"module": "nope"}, "module"),
        ({"calls": [("_private", [1])]}, "calls"),
        ({"calls": [("grade", [object()])]}, "calls"),
        ({"calls": []}, "calls"),
        (
            {"structure": [{"req": "function_complexity", "function": "labels", "bound": 99}]},
            "already met",
        ),
        ({"structure": [{"req": "no_such_requirement"}]}, "unknown requirements"),
        ({"renames": {"grade": "labels"}}, "renames"),
        ({"kind": "stateful"}, "kind"),
    ],
)
def test_wrong_arguments_are_named(kwargs: dict[str, Any], names: str) -> None:
    args: dict[str, Any] = {"module": "grades", "calls": CALLS, "structure": STRUCTURE, **kwargs}
    module = args.pop("module")
    calls = args.pop("calls")
    with pytest.raises(ValueError, match=names):
        refactor_spec({"grades.py": BEFORE}, module, calls, **args)


def test_the_checks_come_from_the_examples_and_the_code() -> None:
    spec = refactor_spec({"grades.py": BEFORE}, "grades", CALLS, structure=STRUCTURE)
    assert [s["a"] for s in spec.checks[0]] == [a for _, a in CALLS]
    assert {e["name"] for e in spec.api} == {"grade", "labels"}
    assert spec.visible_tests == () and spec.editable == ("grades.py",)


def test_a_users_refactoring_succeeds_and_a_boundary_change_does_not() -> None:
    task = refactor_task(
        {"grades.py": BEFORE}, "grades", CALLS, structure=STRUCTURE, max_new_functions=0
    )
    hidden = RefactorHidden.of(task)
    # The examples plus boundary inputs drawn from the code (80 and 90 +- 1).
    scores = {s["a"][0] for seq in hidden.checks for s in seq if s["t"] == "grades:grade"}
    assert {79, 80, 81, 89, 90, 91} <= scores
    env = gym.make("Forge/Refactor-v0", task_bank=TaskList([task]), max_steps=1)
    try:
        done = _submit(env, AFTER)
        # No visible tests: the hidden checks alone decide (no pytest run to fail).
        assert done["success"], done["reward_breakdown"]
        moved = _submit(env, AFTER.replace(">= 80", "> 80"))
        assert not moved["success"]
        assert moved["reward_breakdown"]["terms"]["broken"]["value"] == 1.0
        noop = _submit(env, BEFORE)
        assert not noop["success"]
        assert moved["reward_breakdown"]["total"] <= noop["reward_breakdown"]["total"]
    finally:
        env.close()
