"""Grading in several processes gives the rewards of one process grading the batch."""

from __future__ import annotations

import os

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.family import family_for_env
from forgegym.integrations.sharded import (
    ShardedGrading,
    plan_chunks,
    resolve_grading_processes,
    shard_by_task,
)
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


def test_chunks_keep_each_task_whole_and_shrink_as_the_batch_drains() -> None:
    items = [(f"t{t}", str(i)) for t in range(16) for i in range(8)]
    items.insert(5, ("big", "x"))  # a task out of order, and larger than the rest
    items += [("big", str(i)) for i in range(11)]
    chunks = plan_chunks(items, 2, min_chunk=8)
    assert sorted(i for c in chunks for i in c) == list(range(len(items)))
    for chunk in chunks:
        for task in {items[i][0] for i in chunk}:  # every item of a task is in this chunk
            assert {i for i, (t, _) in enumerate(items) if t == task} <= set(chunk)
    assert "big" in {items[i][0] for i in chunks[0]}  # the largest task goes out first
    sizes = [len(c) for c in chunks]
    assert sizes[0] >= len(items) // 5  # few round trips for the bulk of the batch
    assert sizes[-1] == 8 and sizes == sorted(sizes, reverse=True)  # one task at the end
    # A batch too cheap for more round trips: one chunk per process, balanced.
    assert plan_chunks(items, 2, min_chunk=35) == shard_by_task(items, 2)
    assert plan_chunks([], 2) == []


def test_auto_grading_processes_is_one_per_core_unless_a_runner_is_chosen() -> None:
    cores = len(os.sched_getaffinity(0))
    assert resolve_grading_processes("auto") == cores
    assert resolve_grading_processes("auto", {"runner": "ray"}) == 1
    assert resolve_grading_processes("auto", {"runner_workers": 2}) == 1
    assert resolve_grading_processes(3) == 3
    for bad in (0, -1, True, 2.0, "all", None):
        with pytest.raises(ValueError, match="grading_processes"):
            resolve_grading_processes(bad)


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


def test_chunked_grading_processes_give_the_breakdowns_of_one_process() -> None:
    """Tasks handed out in one-task chunks to two warm processes: every reward and
    breakdown equals the in-process batch's (code-domain trigger checks in the sandbox,
    duplicates, parse errors, no-ops)."""
    from forgegym.envs.oversight.episodes import CODE_DOMAIN, hidden_of

    env_id = "Forge/Oversight-v0"
    env = gym.make(env_id, max_steps=1, runner_workers=1).unwrapped
    try:
        bank = env.task_bank
        pool = bank.task_ids(40, seed=5)
        code = [t for t in pool if hidden_of(bank.get(t)).domain == CODE_DOMAIN][:2]
        other = [t for t in pool if t not in code][:3]
        assert len(code) == 2 and len(other) == 3
        reference = family_for_env(env_id).reference_action()
        items: list[tuple[str, str]] = []
        for task_id in [*code, *other]:
            ref = reference(bank.get(task_id))
            items += [(task_id, text) for text in (ref, NOOP_ACTION, ref, "not an action")]
        expected = env.grade_batch(items)
    finally:
        env.close()
    with ShardedGrading(env_id, None, 2, chunk_s=0) as sharded:
        pids = sharded.start()
        assert len(set(pids)) == 2 and os.getpid() not in pids
        got = sharded.grade_batch(items)
        again = sharded.grade_batch(items[::-1])  # the processes are reused
    assert [value for value, _ in got] == [value for value, _ in expected]
    assert [b.model_dump() for _, b in got] == [b.model_dump() for _, b in expected]
    assert [b.model_dump() for _, b in again] == [b.model_dump() for _, b in expected[::-1]]
    assert expected[0][0] > expected[1][0] and expected[3][1].to_flat_dict()  # fix > no-op
