"""``Forge/Performance-v0``: fast data structures under a complexity bound, speed
measured by the trusted parent. See :class:`forgegym.envs.performance.env.PerformanceEnv`.

The package imports nothing eagerly: its :mod:`~forgegym.envs.performance.driver` and
:mod:`~forgegym.envs.performance.traces` run inside sandbox children, where importing the
environment (gymnasium, pydantic models, ...) would cost more than the measured work.
"""

from __future__ import annotations

from forgegym.family import Family, lazy_exports, register_family

__all__ = [
    "FAMILY",
    "PerformanceEnv",
    "PerformanceGeneratorConfig",
    "PerformanceGrader",
    "PerformanceTaskBank",
    "build_task",
]

# By convention (see forgegym.family): env:PerformanceEnv, bank:PerformanceTaskBank,
# grader:PerformanceGrader, actions:ACTIONS, scan:scan_submission, policies:partial_action,
# hacks:HACKS, bench:run_bench, bank:bank_stats. Named here: what the convention does not say.
FAMILY = register_family(
    Family.in_package(
        __name__,
        "Forge/Performance-v0",
        description="make data structures fast under a complexity bound, measured by the parent",
        # The speed term uses CPU time measured by the parent: verdicts are stable under
        # load (benchmarks/performance_stability.py), the capped speed credit moves a little.
        reward_tolerance=0.05,
    )
)

__getattr__ = lazy_exports(
    __name__,
    {
        "PerformanceEnv": "env",
        "PerformanceGeneratorConfig": "generator",
        "PerformanceGrader": "grader",
        "PerformanceTaskBank": "bank",
        "build_task": "generator",
    },
)
