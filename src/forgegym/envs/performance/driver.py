"""The trusted driver a sandbox child runs: load the candidate, *then* generate the
operation trace from the hidden seed, replay it and return plain values.

Runs inside the child (through a :class:`~forgegym.sandbox.jobs.CallJob` whose target
is :func:`run`), so it imports only the standard library, :mod:`.traces` and the strict
value check. It never measures time: the trusted parent reads the CPU time of the whole
child tree (threads and processes included) from ``wait4``'s rusage.

Modes:

* ``outputs``: return every operation's result (small correctness traces; the parent
  compares them with the reference's and reports the first difference);
* ``digest``: return a SHA-256 of the results (measured runs: every timed run is also a
  correctness check, so returning early or special-casing sizes is caught);
* ``null``: replay the same trace against a do-nothing object without importing the
  candidate (the parent subtracts its CPU time: trace generation and harness overhead).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
from typing import Any

from forgegym.envs.performance import traces
from forgegym.sandbox.harness import strict_plain

__all__ = ["Clock", "run"]

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
    trace = traces.generate(structure, random.Random(seed), size, ops, profile)
    if klass is None:
        klass = _null_class({name for name, _ in trace.ops})
    clock = Clock()
    init = [clock if a == traces.CLOCK else a for a in trace.init]
    obj = klass(*init)
    out: list[Any] = []
    append = out.append
    for index, (name, args) in enumerate(trace.ops):
        if name == traces.ADVANCE:
            clock.now += args[0]
            append(None)
            continue
        if name == traces.CONCURRENT:
            append(traces.run_concurrent(obj, args))
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
