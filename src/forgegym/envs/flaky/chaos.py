"""Seeded chaos schedules and the trusted setup hook that applies them in the child.

A schedule is a list of reruns; each rerun fixes every source of flakiness the
scenarios use: the RNG seed (local fakes draw injected latency, drops and races
from the process RNG), the test order (file, reversed, shuffled, alone, twice in
one process, after one other test), ``PYTHONHASHSEED``, ``TZ``, ``LANG``, a clock
offset and the thread switch interval. Given (scenario, files, schedule seed) the
outcome of every rerun is therefore a deterministic function of these parameters,
not of luck: races are cooperative (asyncio) and interleave where the seeded fakes
yield, and the wall clock is pinned to a base epoch plus the rerun's offset.

Extended schedules (a user's repository, ``make_schedule(..., extended=True)``) add
what real suites are flaky under: ``PYTHONHASHSEED`` from :data:`HASH_SEEDS`
(set/dict-of-str iteration order; the sandbox keeps warm zygotes per hash seed, so a
new seed costs an interpreter start, which is what bounds the palette), real thread interleavings (a 1 µs switch interval and
seeded start latency of the threads a test starts) and
CPU pressure (a spinning thread contending for the GIL, so work takes longer on the
pinned clock). Real threads make those reruns' outcomes depend on the OS scheduler
too: repeatable in distribution, not bit for bit.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "BASE_EPOCH",
    "CALM",
    "HASH_SEEDS",
    "ChaosRun",
    "apply_chaos",
    "make_schedule",
    "order_for",
]

#: 2024-03-06 12:00:00 UTC (a Wednesday, mid-day): the pinned wall clock's base.
BASE_EPOCH = 1709726400.0

#: POSIX TZ strings work without tzdata (the sandbox may have none).
_TZS = ("UTC0", "EST+5", "JST-9", "PST+8", "IST-5:30", "NZST-12", "CET-1", "HST+10")
_LANGS = ("C.UTF-8", "de_DE.UTF-8", "en_US.UTF-8", "fr_FR.UTF-8", "pt_BR.UTF-8")
_OFFSETS_H = (0.0, 13.0, -13.0, 7.0, 36.0, -30.0, 60.0)
_SWITCH = (0.005, 1e-6, 0.001, 0.05)
#: Order modes cycled after the calm first rerun, so every schedule of >= 7 reruns
#: contains each mode at least once.
#: PYTHONHASHSEED values of extended schedules, rerun i taking ``HASH_SEEDS[i % n]``
#: (calm runs use the first). As many as a default schedule has reruns: the iteration
#: order of a 3-element set matches a test's expectation under about one seed in six,
#: so a small palette would often see only wrong (or only right) orders. The same seeds
#: for every task, so a long-lived pool finds zygotes of each already warm.
HASH_SEEDS: tuple[int, ...] = tuple(range(10))
#: Probability that a thread the test starts is delayed (1-2 ms) before it runs, in
#: the reruns that inject latency. Every thread: a start delay is a schedule any OS may
#: give (a correct test that joins or waits is unaffected), and at 0.25 a test relying on
#: its thread having run already passed all three latency reruns about 40% of the time,
#: so detecting the race (and a fix's stability) was a coin toss.
THREAD_LATENCY = 1.0
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
    #: Extended schedules only: yield probability in non-main threads, GIL contention.
    thread_latency: float = 0.0
    cpu_pressure: bool = False
    #: Extended schedule: ``hash_seed`` is the run's PYTHONHASHSEED (else 0 is pinned).
    extended: bool = False

    def hook_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "seed": self.seed,
            "clock_offset_s": self.clock_offset_s,
            "switch_interval": self.switch_interval,
            "tz": self.tz,
            "lang": self.lang,
        }
        if self.thread_latency:
            kwargs["thread_latency"] = self.thread_latency
        if self.cpu_pressure:
            kwargs["cpu_pressure"] = True
        if not self.extended:
            # The generated bank: its fakes' faults come from a private RNG (a user's
            # repository keeps the process RNG: seeding it there is the user's fix).
            kwargs["private_rng"] = True
        return kwargs

    def env(self) -> dict[str, str]:
        return {"TZ": self.tz, "LANG": self.lang, "LC_ALL": self.lang}

    def describe(self) -> str:
        extra = (" threads-latency" if self.thread_latency else "") + (
            " cpu-pressure" if self.cpu_pressure else ""
        )
        return (
            f"#{self.index} mode={self.mode} seed={self.seed} hash={self.hash_seed} "
            f"TZ={self.tz} LANG={self.lang} clock{self.clock_offset_s / 3600:+.0f}h{extra}"
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


def make_schedule(seed: int, reruns: int, *, extended: bool = False) -> list[ChaosRun]:
    """The ``reruns`` chaos reruns of schedule ``seed`` (the first one is calm but for
    its RNG seed). Deterministic in ``(seed, reruns, extended)``.

    ``extended``: also vary ``PYTHONHASHSEED`` over :data:`HASH_SEEDS`, inject thread
    latency (every third rerun from #1) and CPU pressure (every fourth from #2). The
    generated bank was validated without them (its scenarios pin hash seed 0)."""
    if reruns < 1:
        raise ValueError(f"reruns must be >= 1, got {reruns!r}")
    rng = random.Random(f"forgegym-flaky-schedule-{seed}")
    runs: list[ChaosRun] = []
    for i in range(reruns):
        if i == 0:
            # Calm environment and order; the RNG seed is the schedule's own so calm
            # outcomes of random-driven scenarios are independent across scenarios.
            calm_seed = rng.randrange(1, 2**31)
            runs.append(replace(CALM, seed=calm_seed, extended=extended))
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
        if extended:
            runs[-1] = replace(
                runs[-1],
                hash_seed=HASH_SEEDS[i % len(HASH_SEEDS)],
                thread_latency=THREAD_LATENCY if i % 3 == 1 else 0.0,
                cpu_pressure=i % 4 == 2,
                extended=True,
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
    thread_latency: float = 0.0,
    cpu_pressure: bool = False,
    paths: Sequence[str] = (),
    private_rng: bool = False,
) -> None:
    """Trusted setup hook, run in the child before collection (cwd = the job's copy).

    Seeds the process RNG (the local fakes' injected latency, drops and races draw
    from it), pins the wall clock to ``BASE_EPOCH + clock_offset_s`` (advancing with
    the monotonic clock), applies ``TZ``/``LANG`` and the thread switch interval;
    ``thread_latency``/``cpu_pressure`` as in :func:`make_schedule`; ``paths``: the
    repository's import roots (``src`` layouts), relative to the job's copy;
    ``private_rng``: the process RNG draws from a private ``Random(seed)`` the code
    under test cannot reseed, peek at or rewind (:func:`forgegym.sandbox.watch.
    private_random`; the same draws as ``random.seed(seed)``).
    """
    import os

    root = os.getcwd()
    for rel in reversed(list(paths)):
        full = os.path.normpath(os.path.join(root, rel))
        if full == root or full.startswith(root + os.sep):
            sys.path.insert(0, full)
    if private_rng:
        from forgegym.sandbox.watch import private_random

        private_random(seed)
    else:
        random.seed(seed)
    if tz is not None:
        os.environ["TZ"] = tz
    if lang is not None:
        os.environ["LANG"] = lang
        os.environ["LC_ALL"] = lang
    if hasattr(time, "tzset"):
        time.tzset()
    sys.setswitchinterval(switch_interval)
    if thread_latency > 0:
        _inject_thread_latency(seed, float(thread_latency))
    if cpu_pressure:
        _start_cpu_pressure()
    start = time.perf_counter()
    base = BASE_EPOCH + float(clock_offset_s)

    def pinned_time() -> float:
        return base + (time.perf_counter() - start)

    time.time = pinned_time  # why: day/hour boundaries become schedule parameters

    def pinned_time_ns() -> int:
        return int(pinned_time() * 1e9)

    time.time_ns = pinned_time_ns


def _inject_thread_latency(seed: int, probability: float) -> None:
    """Threads interleave inside their race windows: the switch interval drops to 1 µs
    (CPython switches at loop back-edges, so a read-modify-write with a loop inside
    loses updates), and a seeded ``probability`` of the threads the test starts begin
    1-2 ms late (a reader that relied on a writer thread having run already sees
    it not run yet).

    The delay is put on the started *instance* (``Thread.start`` wraps its ``run``),
    so threads of a subclass that overrides ``run`` are delayed too (patching
    ``Thread.run`` missed them: OpenCue's ``Nimby(Thread)`` race went undetected in
    about one detection in four); the draws happen in the starting thread, in start
    order, so a schedule delays the same threads every time.

    (Line-level tracing would be finer, but ``sys.settrace`` in a new thread is refused
    by the sandbox's runtime policy, rightly: a trace function is handed frames.)"""
    import threading

    rng = random.Random(f"forgegym-latency-{seed}")
    original_start = threading.Thread.start
    sleep = time.sleep

    def start(self: threading.Thread) -> None:
        if rng.random() < probability:
            delay = rng.uniform(0.001, 0.002)
            body = self.run

            def delayed_run() -> None:
                sleep(delay)
                body()

            self.run = delayed_run  # type: ignore[method-assign]
        original_start(self)

    threading.Thread.start = start  # type: ignore[method-assign]
    sys.setswitchinterval(1e-6)


def _start_cpu_pressure() -> None:
    """A daemon thread spinning on pure-Python work, contending for the GIL for the
    whole run (processes are refused by the runtime policy; a thread is not)."""
    import threading

    def spin() -> None:
        n = 0
        while True:
            n = (n + sum(range(200))) % 1_000_003

    threading.Thread(target=spin, name="forgegym-cpu-pressure", daemon=True).start()
