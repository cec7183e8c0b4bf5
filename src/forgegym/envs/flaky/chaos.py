"""Seeded chaos schedules and the trusted setup hook that applies them in the child.

A schedule is a list of reruns; each rerun fixes every source of flakiness the
scenarios use: the RNG seed (local fakes draw injected latency, drops and races
from the process RNG), the test order (file, reversed, shuffled, alone, twice in
one process, after one other test), ``PYTHONHASHSEED``, ``TZ``, ``LANG``, a clock
offset and the thread switch interval. Given (scenario, files, schedule seed) the
outcome of every rerun is therefore a deterministic function of these parameters,
not of luck: races are cooperative (asyncio) and interleave where the seeded fakes
yield, and the wall clock is pinned to a base epoch plus the rerun's offset.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CALM", "ChaosRun", "apply_chaos", "make_schedule", "order_for", "BASE_EPOCH"]

#: 2024-03-06 12:00:00 UTC (a Wednesday, mid-day): the pinned wall clock's base.
BASE_EPOCH = 1709726400.0

#: POSIX TZ strings work without tzdata (the sandbox may have none).
_TZS = ("UTC0", "EST+5", "JST-9", "PST+8", "IST-5:30", "NZST-12", "CET-1", "HST+10")
_LANGS = ("C.UTF-8", "de_DE.UTF-8", "en_US.UTF-8", "fr_FR.UTF-8", "pt_BR.UTF-8")
_OFFSETS_H = (0.0, 13.0, -13.0, 7.0, 36.0, -30.0, 60.0)
_SWITCH = (0.005, 1e-6, 0.001, 0.05)
#: Order modes cycled after the calm first rerun, so every schedule of >= 7 reruns
#: contains each mode at least once.
_MODES = ("reverse", "twice", "alone", "after", "shuffle", "file", "after", "reverse", "twice")


@dataclass(frozen=True)
class ChaosRun:
    """One rerun's parameters (all JSON-plain, so they travel in a ``SetupHook``)."""

    index: int
    seed: int
    mode: str
    hash_seed: int
    tz: str
    lang: str
    clock_offset_s: float
    switch_interval: float
    after_pick: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def hook_kwargs(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "clock_offset_s": self.clock_offset_s,
            "switch_interval": self.switch_interval,
            "tz": self.tz,
            "lang": self.lang,
        }

    def env(self) -> dict[str, str]:
        return {"TZ": self.tz, "LANG": self.lang, "LC_ALL": self.lang}

    def describe(self) -> str:
        return (
            f"#{self.index} mode={self.mode} seed={self.seed} hash={self.hash_seed} "
            f"TZ={self.tz} LANG={self.lang} clock{self.clock_offset_s / 3600:+.0f}h"
        )


#: The calm run: file order, UTC, C locale, no clock offset, a fixed seed.
CALM = ChaosRun(
    index=0,
    seed=0,
    mode="file",
    hash_seed=0,
    tz="UTC0",
    lang="C.UTF-8",
    clock_offset_s=0.0,
    switch_interval=0.005,
)


def make_schedule(seed: int, reruns: int) -> list[ChaosRun]:
    """The ``reruns`` chaos reruns of schedule ``seed`` (the first one is calm but for
    its RNG seed). Deterministic in ``(seed, reruns)``."""
    if reruns < 1:
        raise ValueError(f"reruns must be >= 1, got {reruns!r}")
    rng = random.Random(f"forgegym-flaky-schedule-{seed}")
    runs: list[ChaosRun] = []
    for i in range(reruns):
        if i == 0:
            # Calm environment and order; the RNG seed is the schedule's own so calm
            # outcomes of random-driven scenarios are independent across scenarios.
            runs.append(ChaosRun(**{**CALM.__dict__, "seed": rng.randrange(1, 2**31)}))
            continue
        runs.append(
            ChaosRun(
                index=i,
                seed=rng.randrange(1, 2**31),
                mode=_MODES[(i - 1 + seed) % len(_MODES)],
                hash_seed=rng.randrange(1, 2**16),
                tz=_TZS[(i + seed) % len(_TZS)] if i % 2 else "UTC0",
                lang=_LANGS[(i + seed) % len(_LANGS)] if i % 3 else "C.UTF-8",
                clock_offset_s=3600.0 * _OFFSETS_H[(i + seed) % len(_OFFSETS_H)],
                switch_interval=_SWITCH[i % len(_SWITCH)],
                after_pick=rng.randrange(1 << 16),
            )
        )
    return runs


def order_for(run: ChaosRun, target: str, all_ids: Sequence[str]) -> list[str]:
    """The pytest order of ``run`` for the flaky test ``target`` among ``all_ids``
    (file order). Modes: file, reverse, shuffle, alone, twice (in one process),
    after (one other test, then the target)."""
    ids = list(all_ids)
    others = [t for t in ids if t != target]
    if run.mode == "reverse":
        return ids[::-1]
    if run.mode == "shuffle":
        shuffled = list(ids)
        random.Random(run.seed).shuffle(shuffled)
        return shuffled
    if run.mode == "alone":
        return [target]
    if run.mode == "twice":
        return [target, target]
    if run.mode == "after":
        return [others[run.after_pick % len(others)], target] if others else [target]
    return ids


def apply_chaos(
    seed: int = 0,
    clock_offset_s: float = 0.0,
    switch_interval: float = 0.005,
    tz: str | None = None,
    lang: str | None = None,
) -> None:
    """Trusted setup hook, run in the child before collection.

    Seeds the process RNG (the local fakes' injected latency, drops and races draw
    from it), pins the wall clock to ``BASE_EPOCH + clock_offset_s`` (advancing with
    the monotonic clock), applies ``TZ``/``LANG`` and the thread switch interval.
    """
    import os

    random.seed(seed)
    if tz is not None:
        os.environ["TZ"] = tz
    if lang is not None:
        os.environ["LANG"] = lang
        os.environ["LC_ALL"] = lang
    if hasattr(time, "tzset"):
        time.tzset()
    sys.setswitchinterval(switch_interval)
    start = time.perf_counter()
    base = BASE_EPOCH + float(clock_offset_s)

    def pinned_time() -> float:
        return base + (time.perf_counter() - start)

    time.time = pinned_time  # why: day/hour boundaries become schedule parameters

    def pinned_time_ns() -> int:
        return int(pinned_time() * 1e9)

    time.time_ns = pinned_time_ns
