"""Grading in several processes gives the rewards of one process grading the batch."""

from __future__ import annotations

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.sharded import ShardedGrading, shard_by_task
from forgegym.family import family_for_env
from forgegym.integrations.trl import make_reward_funcs
from forgegym.policies import NOOP_ACTION


def test_shards_keep_each_task_whole_and_balance_them() -> None:
    items = [("a", "1"), ("b", "1"), ("a", "2"), ("c", "1"), ("a", "3"), ("b", "2")]
    groups = shard_by_task(items, 2)
    assert sorted(i for g in groups for i in g) == list(range(len(items)))
    for group in groups:
        tasks = {items[i][0] for i in group}
        for task in tasks:  # every item of a task is in this group
            assert {i for i, (t, _) in enumerate(items) if t == task} <= set(group)
    assert sorted(len(g) for g in groups) == [3, 3]  # a | b + c
    assert shard_by_task(items, 8) == [[0, 2, 4], [1, 5], [3]]
    assert shard_by_task([], 3) == []


def test_a_runner_object_cannot_be_shipped_to_grading_processes() -> None:
    with pytest.raises(ValueError, match="runner"):
        ShardedGrading("Forge/Bugfix-v0", {"runner": object()}, 2)
    with pytest.raises(ValueError, match="grading_processes"):
        ShardedGrading("Forge/Bugfix-v0", None, 0)
    with pytest.raises(ValueError, match="grading_processes"):
        make_reward_funcs("Forge/Bugfix-v0", grading_processes=0)


@pytest.mark.parametrize(
    "env_id", [pytest.param("Forge/Bugfix-v0", marks=pytest.mark.slow), "Forge/Oversight-v0"]
)
def test_sharded_reward_functions_equal_the_in_process_ones(env_id: str) -> None:
    env = gym.make(env_id, max_steps=1).unwrapped
    try:
        family = family_for_env(env_id)
        task_ids = env.task_bank.task_ids(3, seed=31)
        ids: list[str] = []
        texts: list[str] = []
        for task_id in task_ids:
            ref = family.reference_action()(env.task_bank.get(task_id))
            group = [ref, NOOP_ACTION, ref, "not an action"]
            ids += [task_id] * len(group)
            texts += group
    finally:
        env.close()
    outputs = []
    for processes in (1, 2):
        (reward,) = make_reward_funcs(env_id, grading_processes=processes)
        try:
            logged: dict[str, float] = {}
            values = reward([""] * len(texts), texts, ids, log_metric=logged.__setitem__)
            outputs.append((values, logged))
        finally:
            reward.close()  # type: ignore[attr-defined]
    assert outputs[0] == outputs[1]
    values = outputs[0][0]
    assert values[0] > values[1] and values[2] == values[0]  # a fix beats a no-op
