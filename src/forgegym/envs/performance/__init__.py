"""``Forge/Performance-v0``: fast data structures under a complexity bound, speed
measured by the trusted parent. See :class:`forgegym.envs.performance.env.PerformanceEnv`.

The package imports nothing eagerly: its :mod:`~forgegym.envs.performance.driver` and
:mod:`~forgegym.envs.performance.traces` run inside sandbox children, where importing the
environment (gymnasium, pydantic models, ...) would cost more than the measured work.
"""

from __future__ import annotations

from forgegym.family import EnvSpec, Family, lazy_exports, register_family

__all__ = [
    "FAMILY",
    "PerformanceEnv",
    "PerformanceGeneratorConfig",
    "PerformanceGrader",
    "PerformanceTaskBank",
    "build_task",
]

FAMILY = register_family(
    Family(
        name="performance",
        envs=(EnvSpec("Forge/Performance-v0"),),
        env_class="forgegym.envs.performance.env:PerformanceEnv",
        task_bank="forgegym.envs.performance.bank:PerformanceTaskBank",
        action_models="forgegym.core.actions:CODE_ACTIONS",
        grader="forgegym.envs.performance.grader:PerformanceGrader",
        partial="forgegym.envs.performance.policies:partial_action",
        hacks="forgegym.envs.performance.hacks:HACKS",
        bench="forgegym.envs.performance.bench:run_bench",
        stats="forgegym.envs.performance.bank:bank_stats",
        scanners={"performance": "forgegym.envs.performance.scan:scan_submission"},
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
