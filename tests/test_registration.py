"""Every registered id honours the environment contract."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forgegym
from forgegym.registration import env_ids

EXPECTED_IDS = {"Forge/Bugfix-v0", "Forge/FlakyRepair-v0"}
IDS = sorted(env_ids())


def test_registry_lists_exactly_the_working_families() -> None:
    assert set(IDS) == EXPECTED_IDS
    assert all(env_id in gym.registry for env_id in IDS)


def test_make_with_module_prefix_works_without_prior_import() -> None:
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('forgegym:Forge/Bugfix-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(info['family'])\n"
        "env.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("bugfix")


def test_version_is_exposed() -> None:
    assert forgegym.__version__.count(".") == 2


@pytest.mark.parametrize("env_id", IDS)
def test_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_steps": 0}, "max_steps"),
        ({"max_steps": 2.5}, "max_steps"),
        ({"difficulty": 99}, "difficulty"),
        ({"format_penalty": 3}, "format_penalty"),
        ({"render_mode": "rgb_array"}, "render_mode"),
    ],
)
def test_bad_make_arguments_raise_value_error_naming_them(
    env_id: str, kwargs: dict, name: str
) -> None:
    with pytest.raises(ValueError, match=name):
        gym.make(env_id, **kwargs)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_first_observation(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        first, info_a = env.reset(seed=11)
        second, info_b = env.reset(seed=11)
        assert first == second and info_a["task_id"] == info_b["task_id"]
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_arbitrary_text_never_raises_and_errors_reach_the_observation(env_id: str) -> None:
    env = gym.make(env_id, max_steps=50)
    env.reset(seed=0)

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        st.one_of(
            st.text(max_size=300),
            st.sampled_from(
                [
                    "",
                    "{",
                    '{"action": "edit"}',
                    '{"action": "edit", "edits": [{"path": "../../etc/passwd", "content": "x"}]}',
                    '{"action": "run_tests", "tests": ["nope::nope"]}',
                    '[{"action": "plan", "text": 1}]',
                    "```json\n[]\n```",
                    '{"action": null}',
                ]
            ),
        )
    )
    def fuzz(text: str) -> None:
        observation, reward, terminated, truncated, info = env.step(text)
        assert isinstance(observation, str) and isinstance(reward, float)
        error = info.get("action_error")
        if error is not None:
            assert error in observation
        if terminated or truncated:
            env.reset(seed=0)

    try:
        fuzz()
    finally:
        env.close()
