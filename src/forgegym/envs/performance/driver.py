"""The trusted driver a sandbox child runs: load the candidate, *then* generate the
operation trace from the hidden seed, replay it and return plain values.

Runs inside the child (through a :class:`~forgegym.sandbox.jobs.CallJob` whose target
is :func:`run`), so it imports only the standard library and the (staged) strict
value check. It never measures time: the trusted parent reads the CPU time of the whole
child tree (threads and processes included) from ``wait4``'s rusage.

Modes:

* ``outputs``: return every operation's result (small correctness traces; the parent
  compares them with the reference's and reports the first difference);
* ``digest``: return a SHA-256 of the results (measured runs: every timed run is also a
  correctness check, so returning early or special-casing sizes is caught);
* ``null``: replay the same trace against a do-nothing object without importing the
  candidate (the parent subtracts its CPU time: trace generation and harness overhead).

Self-contained on purpose: the sandbox stages only this one file of forgegym's
envs (plus the sandbox package), so the trace generators live here too
(:mod:`~forgegym.envs.performance.traces` re-exports them for the parent).

Traces
------
A trace is a constructor call and a list of ``(method, args)`` operations: a fill phase
that grows the structure to about ``size`` elements (a cache's capacity, a window, a
universe), then a fixed number of operations on it. Measured at sizes n, 4n and 16n with
the same number of operations, an O(1)-per-operation implementation costs about the
same at every size, an O(log n) one a little more, an O(n) one 16 times more: the parent
reads the per-operation scaling exponent from that. Two pseudo-operations are handled by the driver:
``@advance`` moves the injected clock, ``@concurrent`` runs a multi-threaded phase.

Standard library only; a ``random.Random`` is the only source of randomness.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from forgegym.sandbox.protocol import strict_plain

__all__ = [
    "ADVANCE",
    "CLOCK",
    "CONCURRENT",
    "GENERATORS",
    "PROFILES",
    "Clock",
    "Trace",
    "generate",
    "run",
    "run_concurrent",
]

# ====================================================================== traces
CLOCK = "@clock"  # constructor argument replaced by the injected clock
ADVANCE = "@advance"
CONCURRENT = "@concurrent"

#: Workload profiles: the fraction of read operations and how keys are drawn.
PROFILES: dict[str, dict[str, Any]] = {
    "balanced": {"read": 0.5, "skew": False},
    "read_heavy": {"read": 0.8, "skew": False},
    "write_heavy": {"read": 0.2, "skew": False},
    "skewed": {"read": 0.5, "skew": True},
}


@dataclass
class Trace:
    init: list[Any]
    ops: list[tuple[str, list[Any]]] = field(default_factory=list)


def _key_fn(rng: random.Random, space: int, profile: str) -> Callable[[], int]:
    if PROFILES[profile]["skew"]:
        return lambda: int(space * rng.random() ** 3)
    return lambda: rng.randrange(space)


def _read(profile: str) -> float:
    return float(PROFILES[profile]["read"])


# ------------------------------------------------------------------ caches
def _lru(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    key = _key_fn(rng, 2 * n, profile)
    read = _read(profile)
    trace = Trace([n])
    ops = trace.ops
    for k in rng.sample(range(2 * n), n):  # fill: the cache holds ~n entries
        ops.append(("put", [k, rng.randrange(1_000_000)]))
    for _ in range(m):
        if rng.random() < read:
            ops.append(("get", [key()]))
        else:
            ops.append(("put", [key(), rng.randrange(1_000_000)]))
    return trace


def _threadsafe_lru(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    trace = _lru(rng, n, m, profile)
    trace.ops.append((CONCURRENT, [4, 150, rng.randrange(1 << 30), n]))
    return trace


def _ttl(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    ttl = 3 * n
    key = _key_fn(rng, 2 * n, profile)
    read = _read(profile)
    trace = Trace([n, ttl, CLOCK])
    ops = trace.ops
    for k in rng.sample(range(2 * n), n):
        ops.append(("put", [k, rng.randrange(1_000_000)]))
        if rng.random() < 0.3:
            ops.append((ADVANCE, [rng.randint(1, 4)]))
    for _ in range(m):
        r = rng.random()
        if r < 0.3:
            ops.append((ADVANCE, [rng.randint(1, 4)]))
        elif r < 0.33:
            ops.append(("size", []))
        elif rng.random() < read:
            ops.append(("get", [key()]))
        else:
            ops.append(("put", [key(), rng.randrange(1_000_000)]))
    return trace


def _weighted_lru(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    max_weight = 5 * n
    key = _key_fn(rng, 2 * n, profile)
    read = _read(profile)
    trace = Trace([max_weight])
    ops = trace.ops
    for k in rng.sample(range(2 * n), n):
        ops.append(("put", [k, rng.randrange(1_000_000), rng.randint(1, 9)]))
    for _ in range(m):
        if rng.random() < 0.03:
            ops.append(("total_weight", []))
        elif rng.random() < read:
            ops.append(("get", [key()]))
        else:
            weight = rng.randint(1, 9) if rng.random() < 0.995 else max_weight + 1
            ops.append(("put", [key(), rng.randrange(1_000_000), weight]))
    return trace


def _lfu(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    return _lru(rng, n, m, profile)


# ------------------------------------------------------------------ sequences
def _ring_buffer(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    read = _read(profile)
    trace = Trace([n])
    ops = trace.ops
    for _ in range(n):
        ops.append(("append", [rng.randrange(1_000_000)]))
    for _ in range(m):
        r = rng.random()
        if r < read * 0.8:
            ops.append(("get", [rng.randrange(n + 2)]))
        elif r < read * 0.8 + 0.05:
            ops.append(("size", []))
        elif r < read * 0.8 + 0.1:
            ops.append(("pop_left", []))
        else:
            ops.append(("append", [rng.randrange(1_000_000)]))
    return trace


def _minmax_queue(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    read = _read(profile)
    skew = PROFILES[profile]["skew"]
    trace = Trace([])
    ops = trace.ops
    for i in range(n):
        ops.append(("push", [i if skew and rng.random() < 0.7 else rng.randrange(1_000_000)]))
    size = n
    for i in range(m):
        if rng.random() < read:
            ops.append(("min" if rng.random() < 0.5 else "max", []))
        elif size <= n:
            value = n + i if skew and rng.random() < 0.7 else rng.randrange(1_000_000)
            ops.append(("push", [value]))
            size += 1
        else:
            ops.append(("pop", []))
            size -= 1
    ops.append(("pop", []))
    return trace


def _sliding_median(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    trace = Trace([n])
    skew = PROFILES[profile]["skew"]
    for _ in range(n + m):
        value = rng.randrange(50) if skew and rng.random() < 0.5 else rng.randrange(1_000_000)
        trace.ops.append(("add", [value]))
    return trace


def _top_k(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    read = _read(profile)
    skew = PROFILES[profile]["skew"]
    trace = Trace([n])
    ops = trace.ops
    for _ in range(n):
        ops.append(("add", [rng.randrange(10**6)]))
    tops = {m // 3, (2 * m) // 3, m - 1}
    for i in range(m):
        if i in tops:
            ops.append(("top", []))
        elif rng.random() < read * 0.6:
            ops.append(("kth", []))
        else:
            ops.append(("add", [rng.randrange(100) if skew else rng.randrange(10**6)]))
    return trace


# ------------------------------------------------------------------ graphs, heaps, trees
def _union_find(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    universe = 2 * n
    read = _read(profile)
    key = _key_fn(rng, universe, profile)
    trace = Trace([universe])
    ops = trace.ops
    for _ in range(n // 2):
        ops.append(("union", [rng.randrange(universe), rng.randrange(universe)]))
    for _ in range(m):
        if rng.random() < 0.03:
            ops.append(("count", []))
        elif rng.random() < read:
            if rng.random() < 0.5:
                ops.append(("connected", [key(), key()]))
            else:
                ops.append(("size", [key()]))
        else:
            ops.append(("union", [key(), key()]))
    return trace


def _indexed_heap(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    read = _read(profile)
    trace = Trace([])
    ops = trace.ops
    for k in range(n):
        ops.append(("push", [k, rng.randrange(10**6)]))
    next_key = n
    size = n
    for _ in range(m):
        r = rng.random()
        if r < read * 0.7:
            ops.append(("decrease", [rng.randrange(next_key), rng.randrange(-(10**6), 10**6)]))
        elif r < read * 0.7 + 0.1:
            ops.append(("peek" if rng.random() < 0.5 else "size", []))
        elif size <= n:
            ops.append(("push", [next_key, rng.randrange(10**6)]))
            next_key += 1
            size += 1
        else:
            ops.append(("pop", []))
            size -= 1
    return trace


def _range_sum(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    read = _read(profile)
    trace = Trace([n])
    ops = trace.ops
    for _ in range(n // 4):
        ops.append(("set", [rng.randrange(n), rng.randrange(-1000, 1000)]))
    for _ in range(m):
        if rng.random() < read:
            a, b = rng.randrange(n + 1), rng.randrange(n + 1)
            ops.append(("query", [min(a, b), max(a, b)]))
        elif rng.random() < 0.7:
            ops.append(("add", [rng.randrange(n), rng.randrange(-1000, 1000)]))
        else:
            ops.append(("set", [rng.randrange(n), rng.randrange(-1000, 1000)]))
    return trace


def _word(rng: random.Random, alphabet: str, low: int, high: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def _trie(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    read = _read(profile)
    alphabet = "abc" if PROFILES[profile]["skew"] else "abcdef"
    trace = Trace([])
    ops = trace.ops
    inserted: list[str] = []
    for _ in range(n):
        word = _word(rng, alphabet, 3, 9)
        inserted.append(word)
        ops.append(("insert", [word]))
    for _ in range(m):
        r = rng.random()
        if r < read:
            if rng.random() < 0.6:
                ops.append(("count_prefix", [_word(rng, alphabet, 1, 4)]))
            else:
                word = rng.choice(inserted) if rng.random() < 0.5 else _word(rng, alphabet, 3, 9)
                ops.append(("contains", [word]))
        elif rng.random() < 0.3:
            ops.append(("remove", [rng.choice(inserted)]))
        else:
            word = _word(rng, alphabet, 3, 9)
            inserted.append(word)
            ops.append(("insert", [word]))
    return trace


def _rate_limiter(rng: random.Random, n: int, m: int, profile: str) -> Trace:
    key = _key_fn(rng, n, profile)
    read = _read(profile)
    trace = Trace([rng.randint(1, 3), rng.randint(3, 10), CLOCK])
    ops = trace.ops
    for c in range(n):
        ops.append(("allow", [f"c{c}", rng.randint(1, 4)]))
    for _ in range(m):
        r = rng.random()
        if r < 0.3:
            ops.append((ADVANCE, [rng.randint(1, 2)]))
        elif rng.random() < read * 0.4:
            ops.append(("tokens", [f"c{key()}"]))
        else:
            ops.append(("allow", [f"c{key()}", rng.randint(1, 4)]))
    return trace


GENERATORS: dict[str, Callable[[random.Random, int, int, str], Trace]] = {
    "lru": _lru,
    "lfu": _lfu,
    "ttl": _ttl,
    "weighted_lru": _weighted_lru,
    "threadsafe_lru": _threadsafe_lru,
    "ring_buffer": _ring_buffer,
    "minmax_queue": _minmax_queue,
    "sliding_median": _sliding_median,
    "top_k": _top_k,
    "union_find": _union_find,
    "indexed_heap": _indexed_heap,
    "range_sum": _range_sum,
    "trie": _trie,
    "rate_limiter": _rate_limiter,
}


def generate(structure: str, rng: random.Random, size: int, ops: int, profile: str) -> Trace:
    """The trace for ``structure`` under ``profile``: a fill phase that grows the structure
    to about ``size`` elements, then ``ops`` operations on it."""
    if structure not in GENERATORS:
        raise ValueError(f"structure must be one of {sorted(GENERATORS)}, got {structure!r}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    for name, value in (("size", size), ("ops", ops)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    return GENERATORS[structure](rng, size, ops, profile)


def run_concurrent(obj: Any, args: list[Any]) -> bool:
    """Hammer ``obj`` (a cache with ``get``/``put``) from several threads, each on its own
    keys, and report whether every read saw either a miss or its thread's last write and
    no operation raised. The interpreter switches threads very often meanwhile."""
    threads_n, per_thread, seed, cap = (int(a) for a in args)
    ok = [True] * threads_n

    def worker(index: int) -> None:
        rng = random.Random(seed + index)
        mine: dict[int, int] = {}
        base = 10_000_000 * (index + 1)
        try:
            for _ in range(per_thread):
                k = base + rng.randrange(max(2, cap // threads_n))
                if rng.random() < 0.5:
                    v = rng.randrange(1_000_000)
                    obj.put(k, v)
                    mine[k] = v
                else:
                    got = obj.get(k)
                    if got != -1 and got != mine.get(k):
                        ok[index] = False
        except Exception:  # noqa: BLE001 - a crash under contention is the failure
            ok[index] = False

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads_n)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    finally:
        sys.setswitchinterval(old)
    return all(ok)


# ====================================================================== replay
MODES = ("outputs", "digest", "null")


class Clock:
    """The injected clock: integer ticks, advanced only by the trace (``@advance``)."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def _null_class(names: set[str]) -> type:
    """A class whose methods ``names`` do nothing (the overhead baseline): the same
    replay loop, attribute lookups and calls as a real structure, and no work."""

    def nothing(self: Any, *args: Any) -> None:
        return None

    def init(self: Any, *args: Any) -> None:
        return None

    namespace: dict[str, Any] = {name: nothing for name in names}
    namespace["__init__"] = init
    return type("Null", (), namespace)


def _describe(name: str, args: list[Any]) -> str:
    text = f"{name}({', '.join(repr(a) for a in args)})"
    return text if len(text) <= 200 else text[:197] + "..."


def run(
    module: str, cls: str, structure: str, seed: int, size: int, ops: int, profile: str, mode: str
) -> dict[str, Any]:
    """Replay the ``structure`` trace (structure ``size``, ``ops`` operations) drawn from
    ``seed``; see the module docstring for ``mode``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    klass: Any = None
    if mode != "null":
        klass = getattr(importlib.import_module(module), cls)
    # The trace exists only from here on: after the candidate was imported.
    trace = generate(structure, random.Random(seed), size, ops, profile)
    if klass is None:
        klass = _null_class({name for name, _ in trace.ops})
    clock = Clock()
    init = [clock if a == CLOCK else a for a in trace.init]
    obj = klass(*init)
    out: list[Any] = []
    append = out.append
    for index, (name, args) in enumerate(trace.ops):
        if name == ADVANCE:
            clock.now += args[0]
            append(None)
            continue
        if name == CONCURRENT:
            append(run_concurrent(obj, args))
            continue
        try:
            append(getattr(obj, name)(*args))
        except Exception as exc:  # noqa: BLE001 - reported with the failing operation
            raise RuntimeError(
                f"operation #{index} {_describe(name, args)} raised "
                f"{type(exc).__name__}: {str(exc)[:200]}"
            ) from None
    if mode == "outputs":
        return {"n": len(out), "outputs": out}
    plain = strict_plain(out)
    digest = hashlib.sha256(json.dumps(plain, separators=(",", ":")).encode()).hexdigest()
    return {"n": len(out), "digest": digest if mode == "digest" else ""}
