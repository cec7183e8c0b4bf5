"""Old import path of :mod:`forgegym.policies.verify` (issue 35 moved task validation
beside the policies it runs, below ``envs``, so offline bank building can use it);
kept so that ``from forgegym.play.verify import ...`` keeps working."""

from __future__ import annotations

from forgegym.policies.verify import (
    NOOP_MAX,
    REFERENCE_MIN,
    TaskCheck,
    VerifySummary,
    check_task,
    verify_tasks,
)

__all__ = ["NOOP_MAX", "REFERENCE_MIN", "TaskCheck", "VerifySummary", "check_task", "verify_tasks"]
