"""Where grading time goes: named, exclusive wall-time phases of the trusted parent.

Grading code marks its parent-side phases with :func:`phase` (``parse``, ``scratch``,
``scans``, ``lint``, ``compose``, ``sandbox``, ...). Nothing is recorded unless a
:class:`PhaseRecorder` is active (``forgegym bench --throughput`` activates one), so
the markers cost one global read when nobody measures.

Phases are *exclusive*: time spent in a phase nested inside another (``lint`` inside
``scans``, say) counts for the inner one only, per thread. Phases running in other
threads at the same time (a lint thread while the sandbox jobs run) are summed, so the
per-phase totals can exceed the wall time: they say how much work each phase is, the
wall time says how well it overlapped.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PhaseRecorder", "add", "phase", "recording"]


class PhaseRecorder:
    """Accumulates exclusive wall time (seconds) and entry counts per phase name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def add(self, name: str, seconds: float) -> None:
        with self._lock:
            self.seconds[name] += seconds
            self.counts[name] += 1

    def snapshot(self) -> dict[str, float]:
        with self._lock:
            return dict(self.seconds)


_ACTIVE: PhaseRecorder | None = None
_STACK = threading.local()


@contextmanager
def recording() -> Iterator[PhaseRecorder]:
    """Record every :func:`phase` (all threads) into a fresh recorder while active."""
    global _ACTIVE
    previous, recorder = _ACTIVE, PhaseRecorder()
    _ACTIVE = recorder
    try:
        yield recorder
    finally:
        _ACTIVE = previous


def add(name: str, seconds: float) -> None:
    """Add ``seconds`` to ``name`` when recording (e.g. sandbox CPU time of results)."""
    recorder = _ACTIVE
    if recorder is not None:
        recorder.add(name, seconds)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Mark the enclosed code as phase ``name`` (exclusive of nested phases)."""
    recorder = _ACTIVE
    if recorder is None:
        yield
        return
    stack: list[list[float]] = getattr(_STACK, "frames", None) or []
    _STACK.frames = stack
    frame = [0.0]  # time spent in nested phases
    stack.append(frame)
    start = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - start
        stack.pop()
        if stack:
            stack[-1][0] += elapsed
        recorder.add(name, max(0.0, elapsed - frame[0]))
