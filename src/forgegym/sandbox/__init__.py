"""Running untrusted code: jobs, the runner pool, isolation and the in-child harness."""

from __future__ import annotations

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
from .runners.pool import ForkServerRunner, Runner, SubprocessRunner, get_default_runner

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
