"""Built-in policies on a task with no known fix say so instead of silently scoring 0."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.policies import make


def _repo(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "stats.py").write_text("def mean(v):\n    return sum(v) / (len(v) + 1)\n")
    (root / "tests" / "test_stats.py").write_text(
        "from stats import mean\n\ndef test_mean():\n    assert mean([1, 2]) == 1.5\n"
    )
    return root


@pytest.mark.parametrize("name", ["reference", "partial"])
def test_fix_based_policies_warn_when_the_task_has_no_known_fix(tmp_path: Path, name: str) -> None:
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(_repo(tmp_path / "repo")),
        failing_tests=["tests/test_stats.py::test_mean"],
        max_steps=1,
    )
    try:
        policy = make(name, env)
        observation, info = env.reset(seed=0)
        with pytest.warns(UserWarning, match=f"{name}: .*no known fix"):
            policy(observation, info)
    finally:
        env.close()


def test_no_warning_where_the_reference_is_known() -> None:
    import warnings

    env = gym.make("Forge/Bugfix-v0", max_steps=1)
    try:
        policy = make("reference", env)
        observation, info = env.reset(seed=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            policy(observation, info)
    finally:
        env.close()
