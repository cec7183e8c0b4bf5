"""Runners by name: every registered family that takes a sandbox runner accepts
``runner="forkserver" | "subprocess" | "ray"`` and uses the shared runner of that name."""

from __future__ import annotations

import inspect

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from forgegym.family import families
from forgegym.sandbox.runners import SubprocessRunner, get_default_runner, get_runner

RUNNER_FAMILIES = [
    f for f in families() if "runner" in inspect.signature(f.env_cls.__init__).parameters
]


def test_names_resolve_to_shared_runners() -> None:
    assert get_runner("forkserver") is get_default_runner()
    subprocess_runner = get_runner("subprocess")
    assert isinstance(subprocess_runner, SubprocessRunner)
    assert get_runner("subprocess") is subprocess_runner
    with pytest.raises(ValueError, match="runner must be one of"):
        get_runner("cluster")


@pytest.mark.parametrize("family", RUNNER_FAMILIES, ids=lambda f: f.name)
def test_every_family_takes_a_runner_name(family: object) -> None:
    env_id = family.env_ids[0]  # type: ignore[attr-defined]
    env = gym.make(env_id, runner="subprocess")
    try:
        assert env.unwrapped.runner is get_runner("subprocess")
    finally:
        env.close()
    with pytest.raises(ValueError, match="runner"):
        gym.make(env_id, runner="nonsense")
