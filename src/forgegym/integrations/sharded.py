"""Grading in several trusted processes: the parent's serial work spread over the cores.

One grading process runs its parent-side phases (parsing, scratch copies, static scans,
lint, composing) in one interpreter, so however many sandbox workers it has, that work
is serial: by Amdahl's law a parent share ``s`` of the CPU caps the speedup on ``N``
cores at ``1 / (s + (1 - s) / N)``. :class:`ShardedGrading` removes the cap: it keeps
``processes`` trusted grading processes (spawned, each with its own environment built
from the same id and arguments, and its own fork-server pool of ``workers_per_process``
sandbox workers) and grades a batch by handing its tasks out to them in chunks, each
chunk graded by the environment's own optimised ``grade_batch``.

What makes it pay even for a family that grades in under a millisecond (Oversight:
about 0.9 ms of CPU per completion, half of it in the grading process itself):

* **Persistent, warm processes.** The processes start when the object is made, in the
  background (spawn, imports, the environment, its sandbox pool's zygotes), and live
  until :meth:`ShardedGrading.close`; the first batch waits for them. A lazily started
  sandbox pool would otherwise cost its zygote start-up (~0.5 s, on every process) in
  the first batch that happens to need a sandbox job.
* **Dynamic chunks, sized by what a completion costs.** Tasks go out largest first in
  chunks that shrink as the batch drains (guided self-scheduling: a chunk is about
  ``remaining / (2 * processes)`` of the items, never under one task), each to the
  next process that is free, so one slow task (a timed family's naive submission, a
  code-domain trigger check) does not leave the other cores idle as a fixed split
  would (Performance on 16 tasks: a 2-task chunk queued behind another on one process
  took 19 s while the other process finished the rest). A chunk is never smaller than
  ``chunk_s`` seconds of grading at the previous batch's cost per completion, so a
  family that grades in a fraction of a millisecond goes out in one chunk per process
  (balanced by completions) and the parent's round trip (about a millisecond) stays
  a small share.
* **Compact transfers.** A chunk is its ``(task_id, completion)`` pairs; a result is the
  breakdowns the environment returns (about a hundred bytes per completion pickled),
  and the parent's share is a few milliseconds per 128-completion batch.

Rewards and breakdowns are the same as one process grading the whole batch: each task's
completions go to one chunk whole (so identical completions are still graded once),
the environments are built with the same arguments, and every family's ``grade_batch``
grades a task's completions independently of the other tasks in its batch. Only the
sandbox pool differs (``runner_workers`` per process), which no grader reads; a timed
family (Performance) measures CPU time per job, so its rewards agree within the
family's tolerance, as between any two gradings.

Used by :func:`forgegym.integrations.trl.make_reward_funcs` with ``grading_processes``.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forgegym.rewards import RewardBreakdown

__all__ = ["ShardedGrading", "plan_chunks", "resolve_grading_processes", "shard_by_task"]

#: Default fewest seconds of grading per chunk (at the last batch's cost per completion):
#: ~20 round trips of the parent; also the most a process can finish after another.
CHUNK_S = 0.02

_ENV: Any = None


def _init(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """Worker initializer: build this process's environment (closed at exit)."""
    from multiprocessing import util

    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the ids)

    global _ENV
    _ENV = gym.make(env_id, **env_kwargs).unwrapped
    util.Finalize(None, _ENV.close, exitpriority=10)


def _start() -> int:
    """Warm this process: its environment is built (the initializer); start its sandbox
    pool's zygotes now rather than in the first batch that needs a sandbox job. Its pid."""
    import os

    assert _ENV is not None, "grading process not initialised"
    warm = getattr(getattr(_ENV, "runner", None), "warm", None)
    if callable(warm):
        warm()
    return os.getpid()


def _grade(items: list[tuple[str, str]]) -> list[tuple[float, RewardBreakdown]]:
    from forgegym.core.env import grade_items

    assert _ENV is not None, "grading process not initialised"
    return grade_items(_ENV, items)


def resolve_grading_processes(value: Any, env_kwargs: dict[str, Any] | None = None) -> int:
    """The number of grading processes ``make_reward_funcs(grading_processes=value)`` uses.

    An int >= 1 is taken as given. ``"auto"`` is one grading process per usable core
    (each with a one-worker sandbox pool) where there are at least two cores and the
    environment's sandbox is its own local pool; otherwise 1 (one core: nothing to
    spread; a ``runner`` given in ``env_kwargs``, such as ``"ray"``, already places the
    jobs, a runner object cannot be shipped to other processes, and ``runner_workers``
    asks for one environment with a pool of that size).
    """
    import os

    if isinstance(value, str) and value == "auto":
        kwargs = env_kwargs or {}
        if kwargs.get("runner") is not None or kwargs.get("runner_workers") is not None:
            return 1
        return max(1, len(os.sched_getaffinity(0)))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"grading_processes must be an int >= 1 or 'auto', got {value!r}")
    return value


def _by_task(items: Sequence[tuple[str, str]]) -> list[list[int]]:
    """Indices of ``items`` per task, largest task first (ties: first seen first)."""
    by_task: dict[str, list[int]] = {}
    for index, (task_id, _) in enumerate(items):
        by_task.setdefault(task_id, []).append(index)
    return sorted(by_task.values(), key=len, reverse=True)


def shard_by_task(items: Sequence[tuple[str, str]], shards: int) -> list[list[int]]:
    """Indices of ``items`` in at most ``shards`` groups, each task's items in one group,
    groups balanced by item count (largest tasks first, each to the lightest group)."""
    tasks = _by_task(items)
    groups: list[list[int]] = [[] for _ in range(max(1, min(shards, len(tasks))))]
    for indices in tasks:
        min(groups, key=len).extend(indices)
    return [sorted(g) for g in groups if g]


def plan_chunks(
    items: Sequence[tuple[str, str]], processes: int, min_chunk: int = 1
) -> list[list[int]]:
    """Indices of ``items`` in dispatch order, each task's items in one chunk.

    Guided self-scheduling over the tasks, largest first: each chunk takes whole tasks
    until it holds ``ceil(remaining / (2 * processes))`` items (at least ``min_chunk``),
    so the first chunks are large (few round trips, each process's batch optimisations
    still apply) and the last ones small (the processes finish together). A batch of
    at most ``2 * processes * min_chunk`` items (too cheap to be worth more round
    trips) is one chunk per process, balanced by item count (:func:`shard_by_task`).
    """
    if len(items) <= 2 * max(1, processes) * min_chunk:
        return shard_by_task(items, processes) if items else []
    tasks = deque(_by_task(items))
    remaining = len(items)
    chunks: list[list[int]] = []
    while tasks:
        target = max(min_chunk, math.ceil(remaining / (2 * max(1, processes))))
        chunk: list[int] = []
        while tasks and (not chunk or len(chunk) + len(tasks[0]) <= target):
            chunk.extend(tasks.popleft())
        remaining -= len(chunk)
        chunks.append(sorted(chunk))
    return chunks


class ShardedGrading:
    """``processes`` grading processes for ``env_id`` (see the module docstring).

    Args:
        env_id: a registered id.
        env_kwargs: the environment's arguments (picklable; not a ``runner`` object:
            each process owns its pool).
        processes: grading processes (>= 1).
        workers_per_process: sandbox workers of each process's own pool (>= 1).
        chunk_s: the fewest seconds of grading a chunk holds, estimated from the last
            batch's seconds per completion (the first batch: one task per chunk at the
            least); ``0`` hands out one task at a time at the end of every batch. A
            task is never split.
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any] | None,
        processes: int,
        workers_per_process: int = 1,
        *,
        chunk_s: float = CHUNK_S,
    ) -> None:
        from forgegym.core.env import check_number, check_positive_int

        check_positive_int("grading_processes", processes)
        check_positive_int("workers_per_process", workers_per_process)
        check_number("chunk_s", chunk_s, low=0.0)
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
        self.chunk_s = float(chunk_s)
        self._item_s: float | None = None  # last batch: grading seconds per completion
        # One single-process executor per grading process: a chunk goes to the process
        # chosen for it, and start-up warms every process.
        context = multiprocessing.get_context("spawn")
        self._pools = [
            ProcessPoolExecutor(
                max_workers=1, mp_context=context, initializer=_init, initargs=(env_id, kwargs)
            )
            for _ in range(processes)
        ]
        # Start (and warm) every process now, in the background.
        self._started = [pool.submit(_start) for pool in self._pools]

    def start(self) -> list[int]:
        """Wait until every process is started and warm (imports, environment, sandbox
        pool); their pids."""
        return sorted(future.result() for future in self._started)

    def grade_batch(self, items: Sequence[tuple[str, str]]) -> list[tuple[float, RewardBreakdown]]:
        """What :func:`~forgegym.core.env.grade_items` gives on the environment (its
        ``grade_batch``, or one ``grade_completions`` per task), computed by the grading
        processes, each making that call on its chunks."""
        items = [(str(t), str(c)) for t, c in items]
        self.start()
        min_chunk = 1
        if self._item_s is not None and self._item_s > 0:
            min_chunk = max(1, math.ceil(self.chunk_s / self._item_s))
        queue = deque(plan_chunks(items, self.processes, min_chunk))
        out: list[tuple[float, RewardBreakdown] | None] = [None] * len(items)
        pending: dict[Future[list[tuple[float, RewardBreakdown]]], tuple[int, list[int]]] = {}
        sent: dict[Future[list[tuple[float, RewardBreakdown]]], float] = {}
        busy_s = 0.0

        def send(process: int) -> None:
            # One chunk per process at a time: a chunk goes to the process that is
            # free when it is due, never queued behind a slow one.
            chunk = queue.popleft()
            future = self._pools[process].submit(_grade, [items[i] for i in chunk])
            pending[future] = (process, chunk)
            sent[future] = time.perf_counter()

        try:
            for process in range(self.processes):
                if queue:
                    send(process)
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                now = time.perf_counter()
                for future in done:
                    process, chunk = pending.pop(future)
                    busy_s += now - sent.pop(future)
                    for index, pair in zip(chunk, future.result(), strict=True):
                        out[index] = pair
                    if queue:
                        send(process)
        finally:
            for future in pending:  # an error: do not leave work queued behind it
                future.cancel()
        if items:
            self._item_s = busy_s / len(items)
        return [pair for pair in out if pair is not None]

    def close(self) -> None:
        for pool in self._pools:
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ShardedGrading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
