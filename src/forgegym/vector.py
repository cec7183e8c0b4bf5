"""Gymnasium vector environments over forgegym's text spaces.

Why this module exists
----------------------
``gymnasium.vector.AsyncVectorEnv`` defaults to ``shared_memory=True``: workers write
each observation into a shared buffer and the parent reads it back. Gymnasium's
handlers for :class:`~gymnasium.spaces.Text` cannot carry our observations:

* the parent's view is decoded *once*, when the vector env is built, so every
  ``reset``/``step`` returns the same placeholder strings;
* the buffer holds character-set indices, so characters outside the space's charset
  (any code, any Unicode) would be lost anyway.

Importing this module (``forgegym.register_envs`` does) registers handlers for
:class:`~forgegym.core.spaces.UnicodeText` with Gymnasium's ``singledispatch``
functions ``create_shared_memory`` / ``read_from_shared_memory`` /
``write_to_shared_memory``. So ``gymnasium.make_vec(id, vectorization_mode="async")``
and a hand-built ``AsyncVectorEnv([...])`` both return the real prompts, with the
default ``shared_memory=True``, and ``shared_memory=False`` keeps working too.

We chose this over a ``vector_entry_point`` that forces ``shared_memory=False``
because (1) it fixes the space wherever it is used, not only through ``make_vec``;
(2) it leaves ``make_vec``'s default (sync) mode, ``wrappers=`` and the user's
``vector_kwargs`` untouched (a spec-level ``vector_kwargs`` would override the user's);
and (3) Gymnasium 1.4's async worker only clears its next-step autoreset flag on an
explicit ``reset()`` when shared memory is on, so ``shared_memory=False`` mishandles
"episode ended, caller reset explicitly, then stepped".

Buffer layout: per environment, an 8-byte length followed by ``4 * max_length``
bytes of UTF-8 (``surrogatepass``, so every Python ``str`` round-trips). That is the
worst case for ``max_length`` code points, the same size Gymnasium's own ``Text``
buffer has (int32 per character): about 4 MiB per environment for the default
1 MiB observation limit. Environments with smaller prompts can pass a smaller
``max_observation_chars``. Only the bytes actually written are decoded on read.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import time
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any, overload

import gymnasium as gym
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)
from pydantic import BaseModel

from forgegym.core.spaces import UnicodeText

__all__ = [
    "SharedTextBatch",
    "VectorBenchResult",
    "run_vector_bench",
    "slot_bytes",
]

_HEADER = 8  # int64 byte length of the encoded string in the slot
_ENCODING = "utf-8"
_ERRORS = "surrogatepass"  # lone surrogates are legal in a str; keep them


def slot_bytes(space: UnicodeText) -> int:
    """Bytes one environment's slot needs: the length header plus worst-case UTF-8."""
    return _HEADER + 4 * space.max_length


class SharedTextBatch(Sequence[str]):
    """A live, read-only view of ``n`` strings in a shared buffer.

    ``AsyncVectorEnv`` returns ``deepcopy(self.observations)`` (its default
    ``copy=True``); our ``__deepcopy__`` decodes the current contents into a plain
    ``tuple[str, ...]`` — the same type ``SyncVectorEnv`` returns for text spaces. With
    ``copy=False`` the caller gets this view itself, which (like a NumPy view of a Box
    buffer) reflects later steps.
    """

    def __init__(self, buffer: Any, n: int, slot: int) -> None:
        self._buffer = buffer
        self._n = n
        self._slot = slot

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self._decode(i) for i in range(self._n)[index])
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(f"index {index} out of range for {self._n} environments")
        return self._decode(index)

    def __iter__(self) -> Iterator[str]:
        return (self._decode(i) for i in range(self._n))

    def _decode(self, index: int) -> str:
        view = memoryview(self._buffer).cast("B")
        start = index * self._slot
        length = int.from_bytes(view[start : start + _HEADER], "little")
        body = view[start + _HEADER : start + _HEADER + length]
        return bytes(body).decode(_ENCODING, _ERRORS)

    def to_tuple(self) -> tuple[str, ...]:
        """The current strings as a tuple."""
        return tuple(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return self.to_tuple()

    def __copy__(self) -> tuple[str, ...]:
        return self.to_tuple()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self.to_tuple() == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable view

    def __repr__(self) -> str:
        return f"SharedTextBatch({self.to_tuple()!r})"


@create_shared_memory.register(UnicodeText)
def _create_unicode_text_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    # A raw array: the parent only reads after the worker answered on its pipe, which
    # already orders the accesses, so a lock would only cost time.
    return ctx.RawArray(ctypes.c_uint8, n * slot_bytes(space))


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_text_from_shared_memory(
    space: UnicodeText, shared_memory: Any, n: int = 1
) -> SharedTextBatch:
    return SharedTextBatch(shared_memory, n, slot_bytes(space))


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_text_to_shared_memory(
    space: UnicodeText, index: int, value: str, shared_memory: Any
) -> None:
    slot = slot_bytes(space)
    data = str(value).encode(_ENCODING, _ERRORS)
    if len(data) > slot - _HEADER:
        # Only reachable if an env breaks its own observation_space contract.
        raise ValueError(
            f"observation of {len(value)} characters exceeds the space's "
            f"max_length={space.max_length}"
        )
    view = memoryview(shared_memory).cast("B")
    start = index * slot
    view[start + _HEADER : start + _HEADER + len(data)] = data
    view[start : start + _HEADER] = len(data).to_bytes(_HEADER, "little")


# --------------------------------------------------------------------------- bench


class VectorBenchResult(BaseModel):
    """Throughput of one ``run_vector_bench`` run."""

    env_id: str
    num_envs: int
    episodes: int
    policy: str
    env_kwargs: dict[str, Any] = {}
    sync_seconds: float
    async_seconds: float
    sync_steps: int
    async_steps: int

    @property
    def sync_steps_per_s(self) -> float:
        return self.sync_steps / self.sync_seconds if self.sync_seconds > 0 else float("inf")

    @property
    def async_steps_per_s(self) -> float:
        return self.async_steps / self.async_seconds if self.async_seconds > 0 else float("inf")

    @property
    def speedup(self) -> float:
        """Async throughput over sync throughput (steps per second)."""
        sync = self.sync_steps_per_s
        return self.async_steps_per_s / sync if sync > 0 else float("nan")


def _time_mode(
    env_id: str,
    mode: str,
    num_envs: int,
    episodes: int,
    policy: str,
    seed: int,
    env_kwargs: dict[str, Any],
) -> tuple[float, int]:
    from forgegym.rollouts import baseline_policy, collect_rollouts

    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode, **env_kwargs)
    try:
        act = baseline_policy(policy, env_id, seed=seed)
        # Warm up outside the timed region: worker start-up, imports, the runner pool.
        envs.reset(seed=seed)
        start = time.perf_counter()
        trajectories = collect_rollouts(envs, act, episodes=episodes, seed=seed)
        elapsed = time.perf_counter() - start
    finally:
        envs.close()
    return elapsed, sum(len(t.steps) for t in trajectories)


def run_vector_bench(
    env_id: str,
    num_envs: int = 2,
    episodes: int = 8,
    *,
    policy: str = "reference",
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    print_table: bool = True,
) -> VectorBenchResult:
    """Time the same rollouts with a sync and an async vector env and print the ratio.

    Both modes run ``episodes`` episodes of ``policy`` on ``num_envs`` copies of
    ``env_id`` from the same seed, after a warm-up reset; the table shows wall time,
    env steps per second and async/sync throughput (the target on 2 cores is >= 1.6x,
    since grading runs in child processes and async overlaps the environments).

    Args:
        env_id: a registered forgegym id.
        num_envs: environments per vector env.
        episodes: episodes per mode.
        policy: a baseline policy name (see :func:`forgegym.rollouts.baseline_policy`).
        seed: the run's seed (episode ``k`` is reset with ``seed + k``, see
            :mod:`forgegym.rollouts`).
        env_kwargs: extra keyword arguments for the environment constructor.
        print_table: print a rich table to stdout.

    Returns:
        The measured :class:`VectorBenchResult`.
    """
    if num_envs < 1 or episodes < 1:
        raise ValueError(f"num_envs and episodes must be >= 1, got {num_envs}, {episodes}")
    kwargs = dict(env_kwargs or {})
    sync_s, sync_steps = _time_mode(env_id, "sync", num_envs, episodes, policy, seed, kwargs)
    async_s, async_steps = _time_mode(env_id, "async", num_envs, episodes, policy, seed, kwargs)
    result = VectorBenchResult(
        env_id=env_id,
        num_envs=num_envs,
        episodes=episodes,
        policy=policy,
        env_kwargs=kwargs,
        sync_seconds=sync_s,
        async_seconds=async_s,
        sync_steps=sync_steps,
        async_steps=async_steps,
    )
    if print_table:
        _print_bench(result)
    return result


def _print_bench(result: VectorBenchResult) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=(
            f"{result.env_id}: {result.episodes} episodes of '{result.policy}' "
            f"on {result.num_envs} envs" + (f" {result.env_kwargs}" if result.env_kwargs else "")
        )
    )
    table.add_column("mode")
    table.add_column("seconds", justify="right")
    table.add_column("env steps", justify="right")
    table.add_column("steps/s", justify="right")
    table.add_row(
        "sync",
        f"{result.sync_seconds:.2f}",
        str(result.sync_steps),
        f"{result.sync_steps_per_s:.2f}",
    )
    table.add_row(
        "async",
        f"{result.async_seconds:.2f}",
        str(result.async_steps),
        f"{result.async_steps_per_s:.2f}",
    )
    console = Console()
    console.print(table)
    console.print(f"async/sync throughput: [bold]{result.speedup:.2f}x[/bold] (target >= 1.6x)")
