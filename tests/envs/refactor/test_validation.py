"""Validation through the sandbox on a small sample: reference high, no-op low, every
hack no higher than the no-op, and the hidden checks' mutant kill (the full run built
the shipped manifest; see ``python -m forgegym.envs.refactor.build.manifest``)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from forgegym.envs.refactor.bank import find_spec, load_manifest
from forgegym.envs.refactor.generator import mutant_kill, origin_outcomes
from forgegym.policies.verify import check_task

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env() -> gym.Env:
    env = gym.make("Forge/Refactor-v0", max_steps=1)
    yield env
    env.close()


def _one_per_kind() -> list[str]:
    chosen: dict[str, str] = {}
    for entry in load_manifest()["tasks"]:
        chosen.setdefault(entry["kind"], entry["task_id"])
    return sorted(chosen.values())


@pytest.mark.parametrize("task_id", _one_per_kind())
def test_reference_noop_and_hacks(env: gym.Env, task_id: str) -> None:
    check = check_task(env.unwrapped, task_id)
    assert check.valid, check.problems
    assert check.reference_success and check.reference_score >= 0.95
    assert check.noop_score <= 0.10
    assert len(check.hack_rewards) >= 8
    assert all(r <= check.noop_reward + 1e-9 for r in check.hack_rewards.values())


def test_the_seed_checks_kill_the_mutants_of_the_original() -> None:
    from forgegym.sandbox.runners import get_default_runner

    spec = find_spec("refactor/split_package/stats/seed")
    runner = get_default_runner()
    both = origin_outcomes([spec], runner, 20.0)
    kills = mutant_kill([spec], both, runner, mutants=8, seed=0, timeout_s=20.0)
    record = kills[spec.origin_key]
    assert record["mutants"] == 8
    assert record["detectable"] >= 6
    assert record["killed"] / record["detectable"] >= 0.9
