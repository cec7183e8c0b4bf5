"""Seeded operation traces for every data structure: re-exported from
:mod:`~forgegym.envs.performance.driver`, which must stay one self-contained file because
it is the only module of this family the sandbox child can import."""

from __future__ import annotations

from forgegym.envs.performance.driver import (
    ADVANCE,
    CLOCK,
    CONCURRENT,
    GENERATORS,
    PROFILES,
    Trace,
    generate,
    run_concurrent,
)

__all__ = [
    "ADVANCE",
    "CLOCK",
    "CONCURRENT",
    "GENERATORS",
    "PROFILES",
    "Trace",
    "generate",
    "run_concurrent",
]
