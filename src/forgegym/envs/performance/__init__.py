"""``Forge/Performance-v0``: fast data structures under a complexity bound, speed
measured by the trusted parent. See :class:`forgegym.envs.performance.env.PerformanceEnv`.

The package imports nothing eagerly: its :mod:`~forgegym.envs.performance.driver` and
:mod:`~forgegym.envs.performance.traces` run inside sandbox children, where importing the
environment (gymnasium, pydantic models, ...) would cost more than the measured work.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "PerformanceEnv",
    "PerformanceGeneratorConfig",
    "PerformanceGrader",
    "PerformanceTaskBank",
    "build_task",
]

_WHERE = {
    "PerformanceEnv": "env",
    "PerformanceGeneratorConfig": "generator",
    "PerformanceGrader": "grader",
    "PerformanceTaskBank": "bank",
    "build_task": "generator",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
