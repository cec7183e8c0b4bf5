"""Running untrusted code: jobs, the runner pool, isolation and the in-child harness.

The child imports this package too (its harness lives here), and only the modules of
this folder are staged into its root (not ``runners/``): so the runners are exported
lazily, on first access from the parent.
"""

from __future__ import annotations

from typing import Any

from .jobs import (
    CallJob,
    CallOutcome,
    CallResult,
    CallSpec,
    Job,
    PytestJob,
    PytestResult,
    Result,
    RunStatus,
    SetupHook,
    TestOutcome,
    TestRecord,
)

_RUNNER_EXPORTS = frozenset(
    {"ForkServerRunner", "Runner", "SubprocessRunner", "get_default_runner"}
)


def __getattr__(name: str) -> Any:
    if name in _RUNNER_EXPORTS:
        from forgegym.sandbox import runners

        return getattr(runners, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CallJob",
    "CallOutcome",
    "CallResult",
    "CallSpec",
    "ForkServerRunner",
    "Job",
    "PytestJob",
    "PytestResult",
    "Result",
    "Runner",
    "RunStatus",
    "SetupHook",
    "SubprocessRunner",
    "TestOutcome",
    "TestRecord",
    "get_default_runner",
]
