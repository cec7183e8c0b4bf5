"""``Forge/Refactor-v0`` through ``gym.make``: the seed ``stats`` task (Must show 2, 3),
editing with new, deleted and moved files, and the observation's file tree."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from forgegym.envs.refactor.hacks import HACKS
from forgegym.envs.refactor.policies import partial_action, reference_action

SEED = "refactor/split_package/stats/seed"


def _edit(*edits: dict[str, object]) -> str:
    return (
        "```json\n"
        + json.dumps([{"action": "edit", "edits": list(edits)}, {"action": "submit"}])
        + "\n```"
    )


@pytest.fixture(scope="module")
def env() -> gym.Env:
    env = gym.make("Forge/Refactor-v0", max_steps=1)
    yield env
    env.close()


@pytest.fixture(scope="module")
def seed_task(env: gym.Env):
    env.reset(seed=0, options={"task_id": SEED})
    return env.unwrapped.task


def _play(env: gym.Env, action: str) -> tuple[float, dict]:
    env.reset(seed=0, options={"task_id": SEED})
    _, reward, terminated, _, info = env.step(action)
    assert terminated
    return reward, info


def test_reference_split_succeeds_through_gym_make(env: gym.Env, seed_task) -> None:
    reward, info = _play(env, reference_action(seed_task))
    assert info["success"] is True
    assert info["score"] >= 0.95 and reward >= 0.95


def test_stub_package_with_the_monolith_left_in_place_scores_low(env: gym.Env, seed_task) -> None:
    noop_reward, noop = _play(env, '{"action": "submit"}')
    reward, info = _play(env, HACKS["stub_package"](seed_task))
    assert info["success"] is False and info["score"] == 0.0
    assert "hack_flagged" in info["reward_breakdown"]["gates"]
    assert reward < noop_reward
    # Re-exporting stub (no importlib) beside the monolith: still the monolith left behind.
    stub = _edit(
        {
            "path": "stats/__init__.py",
            "content": "from stats.central import mean, median\nfrom stats.spread import std_dev, percentile\n",
        },
        {"path": "stats/central.py", "content": "from stats._impl import mean, median\n"},
        {"path": "stats/spread.py", "content": "from stats._impl import std_dev, percentile\n"},
        {"path": "stats/_impl.py", "content": seed_task.files["stats.py"]},
    )
    reward, info = _play(env, stub)
    assert info["score"] == 0.0 and not info["success"]
    assert any("monolith_left" in n for n in info["reward_breakdown"]["notes"])


def test_a_split_that_drops_percentile_from_the_old_path_scores_zero(
    env: gym.Env, seed_task
) -> None:
    files = dict(seed_task.reference)
    files["stats/__init__.py"] = (
        files["stats/__init__.py"]
        .replace("from stats.spread import std_dev, percentile", "from stats.spread import std_dev")
        .replace(', "percentile"', "")
    )
    action = _edit(
        *({"path": p, "content": c} for p, c in files.items()),
        {"path": "stats.py", "delete": True},
    )
    reward, info = _play(env, action)
    assert info["score"] == 0.0 and info["success"] is False
    terms = info["reward_breakdown"]["terms"]
    assert terms["api"]["value"] < 1.0 and "percentile" in terms["api"]["detail"]


def test_a_rounding_change_that_passes_the_visible_tests_never_succeeds(
    env: gym.Env, seed_task
) -> None:
    files = dict(seed_task.reference)
    spread = files["stats/spread.py"]
    assert "fraction, 6)" in spread
    files["stats/spread.py"] = spread.replace("fraction, 6)", "fraction, 2)")
    action = _edit(
        *({"path": p, "content": c} for p, c in files.items()),
        {"path": "stats.py", "delete": True},
    )
    reward, info = _play(env, action)
    terms = info["reward_breakdown"]["terms"]
    assert terms["visible"]["value"] == 1.0  # the visible tests do not see it
    assert terms["behaviour"]["value"] < 1.0  # the hidden differential checks do
    assert info["success"] is False and info["score"] == 0.0


def test_partial_policy_sits_between_noop_and_reference(env: gym.Env, seed_task) -> None:
    noop_reward, _ = _play(env, '{"action": "submit"}')
    partial_reward, info = _play(env, partial_action(seed_task))
    ref_reward, _ = _play(env, reference_action(seed_task))
    assert noop_reward < partial_reward < ref_reward
    assert info["success"] is False
    assert info["reward_breakdown"]["terms"]["broken"]["value"] == 0.0


def test_multi_step_moves_and_deletes_show_in_the_observation() -> None:
    env = gym.make("Forge/Refactor-v0", max_steps=3)
    try:
        obs, info = env.reset(seed=0, options={"task_id": SEED})
        assert "stats/*.py" in obs and "delete" in obs
        move = {"action": "edit", "edits": [{"path": "stats.py", "move_to": "stats/__init__.py"}]}
        obs, reward, terminated, truncated, info = env.step(json.dumps(move))
        assert not terminated
        assert "stats/__init__.py  (new, editable)" in obs
        assert "stats.py  (deleted)" in obs
        bad = {"action": "edit", "edits": [{"path": "conftest.py", "content": "x = 1\n"}]}
        obs, reward, terminated, truncated, info = env.step(json.dumps(bad))
        assert "not editable" in obs
    finally:
        env.close()


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="kinds"):
        gym.make("Forge/Refactor-v0", kinds=["no_such_kind"])
    with pytest.raises(ValueError, match="weights"):
        gym.make("Forge/Refactor-v0", weights={"nope": 1.0})
    env = gym.make("Forge/Refactor-v0")
    try:
        with pytest.raises(ValueError, match="task_id"):
            env.reset(options={"task_id": "refactor/split_package/nope/d1v0"})
    finally:
        env.close()


def test_bench_reports_both_runners() -> None:
    from forgegym.envs.refactor.bench import run_bench

    result = run_bench(n=2, show=False)
    assert set(result.times) == {"forkserver", "subprocess"}
    assert all(len(v) == 2 and min(v) > 0 for v in result.times.values())
    assert result.speedup > 0 and "speedup" in str(result)
