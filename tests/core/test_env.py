"""The ForgeEnv contract, on a tiny non-code environment."""

from __future__ import annotations

import json

import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

from tests.fixtures.toy_env import ToyEnv


def say(text: str) -> str:
    return json.dumps([{"action": "plan", "text": text}, {"action": "submit"}])


def test_check_env_passes() -> None:
    check_env(ToyEnv(), skip_render_check=True)


def test_info_contract_and_success() -> None:
    env = ToyEnv(max_steps=3)
    observation, info = env.reset(seed=1)
    for key in (
        "task_id",
        "family",
        "difficulty",
        "step",
        "max_steps",
        "messages",
        "action_schema",
    ):
        assert key in info
    number = info["task_id"].split("/")[1]
    assert number in observation
    _, reward, terminated, truncated, info = env.step(say(number))
    assert terminated and not truncated
    assert info["success"] is True and info["score"] == 1.0 and reward == 1.0
    assert info["reward_breakdown"]["terms"]["correct"]["value"] == 1.0
    roles = [m["role"] for m in info["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def test_malformed_action_costs_format_penalty_and_reports_error() -> None:
    env = ToyEnv(max_steps=3, format_penalty=-0.25)
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step("not json at all")
    assert reward == -0.25 and not terminated and not truncated
    assert "no JSON action" in info["action_error"]
    assert info["action_error"] in observation


def test_truncation_grades_like_submit() -> None:
    env = ToyEnv(max_steps=1)
    _, info = env.reset(seed=5)
    number = info["task_id"].split("/")[1]
    _, reward, terminated, truncated, info = env.step(
        json.dumps({"action": "plan", "text": number})
    )
    assert truncated and not terminated
    assert info["success"] is True and reward == 1.0


def test_same_seed_same_task_and_options() -> None:
    env = ToyEnv()
    assert env.reset(seed=7)[0] == env.reset(seed=7)[0]
    obs, info = env.reset(options={"task_id": "toy/42"})
    assert info["task_id"] == "toy/42" and info["difficulty"] == 2
    assert env.reset(seed=3, options={"difficulty": 1})[1]["difficulty"] == 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": "3"}, "max_steps"),
        ({"difficulty": 9}, "difficulty"),
        ({"format_penalty": 1.0}, "format_penalty"),
        ({"render_mode": "rgb_array"}, "render_mode"),
    ],
)
def test_bad_constructor_arguments_name_the_argument(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ToyEnv(**kwargs)


def test_bad_reset_options_raise_value_error() -> None:
    env = ToyEnv()
    with pytest.raises(ValueError, match="unknown keys"):
        env.reset(options={"level": 1})
    with pytest.raises(ValueError, match="task_id"):
        env.reset(options={"task_id": "toy/1000"})


def test_step_before_reset_and_after_done() -> None:
    env = ToyEnv(max_steps=1)
    with pytest.raises(ResetNeeded):
        env.step("{}")
    env.reset(seed=0)
    env.step(say("0"))
    _, reward, terminated, _, info = env.step(say("0"))
    assert terminated and reward == 0.0 and "episode is over" in info["action_error"]


def test_render_ansi_returns_the_observation() -> None:
    env = ToyEnv(render_mode="ansi")
    observation, _ = env.reset(seed=0)
    assert env.render() == observation


def test_long_observations_are_cut_to_the_observation_space() -> None:
    env = ToyEnv(max_observation_chars=60)
    observation, _ = env.reset(seed=0)
    observation, *_ = env.step("x" * 500)
    assert env.observation_space.contains(observation)
    assert "characters omitted" in observation


def test_batch_grading_is_a_declared_capability() -> None:
    """``uses_batch_grading`` reads the class's ``batch_grading`` (and the env's
    ``optimised_grading``), and a subclass overriding ``grade_completions`` under a
    batch-grading class must say whether its batch path still holds."""
    from typing import Any

    from forgegym.core.env import uses_batch_grading
    from forgegym.envs.code_env import CodeEnv
    from forgegym.envs.oversight.env import OversightEnv

    assert CodeEnv.batch_grading and OversightEnv.batch_grading
    assert not ToyEnv.batch_grading  # the generic grade_batch: one grade_completions a task

    class _Env:
        batch_grading = True

        def __init__(self, optimised: bool) -> None:
            self.optimised_grading = optimised

    assert uses_batch_grading(_Env(True)) and not uses_batch_grading(_Env(False))
    with pytest.raises(TypeError, match="batch_grading"):

        class _Silent(CodeEnv):
            def grade_completions(self, task_id: str, completions: Any) -> Any:
                return []

    class _Declared(CodeEnv):
        batch_grading = False

        def grade_completions(self, task_id: str, completions: Any) -> Any:
            return []

    assert not _Declared.batch_grading


def test_grade_items_takes_the_batch_path_only_where_the_env_declares_it() -> None:
    """``grade_items`` (the one call of the TRL reward function and of every grading
    process) uses the env's ``grade_batch`` when batch grading is on, else one
    ``grade_completions`` per task; the pairs come back in the items' order."""
    from collections.abc import Sequence
    from typing import Any

    from forgegym.core.env import grade_items

    calls: list[str] = []

    class _Env(ToyEnv):
        batch_grading = True

        def grade_completions(self, task_id: str, completions: Sequence[str]) -> Any:
            calls.append(f"completions:{task_id}")
            return [(float(len(c)), f"{task_id}/{c}") for c in completions]

        def grade_batch(self, items: Sequence[tuple[str, str]]) -> Any:
            calls.append("batch")
            return [(float(len(c)), f"{t}/{c}") for t, c in items]

    items = [("a", "x"), ("b", "yy"), ("a", "zzz")]
    expected = [(1.0, "a/x"), (2.0, "b/yy"), (3.0, "a/zzz")]
    assert grade_items(_Env(), items) == expected and calls == ["batch"]
    calls.clear()
    assert grade_items(_Env(optimised_grading=False), items) == expected
    assert calls == ["completions:a", "completions:b"]
