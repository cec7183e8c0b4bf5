"""Grading in several trusted processes: the parent's serial work spread over the cores.

One grading process runs its parent-side phases (parsing, scratch copies, static scans,
lint, composing) in one interpreter, so however many sandbox workers it has, that work
is serial: by Amdahl's law a parent share ``s`` of the CPU caps the speedup on ``N``
cores at ``1 / (s + (1 - s) / N)``. :class:`ShardedGrading` removes the cap: it keeps
``processes`` trusted grading processes (spawned, each with its own environment built
from the same id and arguments, and its own fork-server pool of ``workers_per_process``
sandbox workers) and grades a batch by splitting it by task across them, each shard
on the environment's own optimised ``grade_batch``.

Rewards and breakdowns are the same as one process grading the whole batch: each task's
completions go to one shard whole (so identical completions are still graded once),
and the environments are built with the same arguments. Only the sandbox pool differs
(``runner_workers`` per process), which no grader reads.

Used by :func:`forgegym.integrations.trl.make_reward_funcs` with ``grading_processes``.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forgegym.rewards import RewardBreakdown

__all__ = ["ShardedGrading", "shard_by_task"]

_ENV: Any = None


def _init(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """Worker initializer: build this process's environment (closed at exit)."""
    from multiprocessing import util

    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the ids)

    global _ENV
    _ENV = gym.make(env_id, **env_kwargs).unwrapped
    util.Finalize(None, _ENV.close, exitpriority=10)


def _grade(items: list[tuple[str, str]]) -> list[tuple[float, RewardBreakdown]]:
    from forgegym.core.env import ForgeEnv
    from forgegym.integrations.trl import _batch_path

    assert _ENV is not None, "grading process not initialised"
    if _batch_path(_ENV):
        return list(_ENV.grade_batch(items))
    return list(ForgeEnv.grade_batch(_ENV, items))  # per task: grade_completions


def _ping(_: object = None) -> int:
    import os

    return os.getpid()


def shard_by_task(items: Sequence[tuple[str, str]], shards: int) -> list[list[int]]:
    """Indices of ``items`` in at most ``shards`` groups, each task's items in one group,
    groups balanced by item count (largest tasks first, each to the lightest group)."""
    by_task: dict[str, list[int]] = {}
    for index, (task_id, _) in enumerate(items):
        by_task.setdefault(task_id, []).append(index)
    groups: list[list[int]] = [[] for _ in range(max(1, min(shards, len(by_task))))]
    for indices in sorted(by_task.values(), key=len, reverse=True):
        min(groups, key=len).extend(indices)
    return [sorted(g) for g in groups if g]


class ShardedGrading:
    """``processes`` grading processes for ``env_id`` (see the module docstring).

    Args:
        env_id: a registered id.
        env_kwargs: the environment's arguments (picklable; not a ``runner`` object:
            each process owns its pool).
        processes: grading processes (>= 1).
        workers_per_process: sandbox workers of each process's own pool (>= 1).
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any] | None,
        processes: int,
        workers_per_process: int = 1,
    ) -> None:
        from forgegym.core.env import check_positive_int

        check_positive_int("grading_processes", processes)
        check_positive_int("workers_per_process", workers_per_process)
        kwargs = dict(env_kwargs or {})
        for name in ("runner", "runner_workers"):
            if kwargs.get(name) is not None:
                raise ValueError(
                    f"{name}: grading processes own their sandbox pools; give "
                    f"workers_per_process instead of env_kwargs[{name!r}]"
                )
            kwargs.pop(name, None)
        kwargs["runner_workers"] = workers_per_process
        kwargs.setdefault("max_steps", 1)
        self.env_id = env_id
        self.processes = processes
        self.workers_per_process = workers_per_process
        # One single-process executor per grading process: shard i always goes to
        # process i, so a warm-up batch warms every process.
        context = multiprocessing.get_context("spawn")
        self._pools = [
            ProcessPoolExecutor(
                max_workers=1, mp_context=context, initializer=_init, initargs=(env_id, kwargs)
            )
            for _ in range(processes)
        ]

    def start(self) -> list[int]:
        """Start every process now (imports, environment); their pids."""
        return sorted(pool.submit(_ping).result() for pool in self._pools)

    def grade_batch(self, items: Sequence[tuple[str, str]]) -> list[tuple[float, RewardBreakdown]]:
        """What the environment's ``grade_batch(items)`` gives (its per-task
        ``grade_completions`` where that is the family's batch path), computed by the
        grading processes."""
        items = [(str(t), str(c)) for t, c in items]
        groups = shard_by_task(items, self.processes)
        futures = [
            pool.submit(_grade, [items[i] for i in group])
            for pool, group in zip(self._pools, groups, strict=False)
        ]
        out: list[tuple[float, RewardBreakdown] | None] = [None] * len(items)
        for group, future in zip(groups, futures, strict=True):
            for index, pair in zip(group, future.result(), strict=True):
                out[index] = pair
        return [pair for pair in out if pair is not None]

    def close(self) -> None:
        for pool in self._pools:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ShardedGrading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
