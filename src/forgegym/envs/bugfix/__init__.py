"""``Forge/Bugfix-v0``: procedurally generated bug-fix tasks graded by hidden
differential checks. See :class:`forgegym.envs.bugfix.env.BugfixEnv`.

Registers the family on import (import-light: everything heavy is a lazy reference).
"""

from __future__ import annotations

import importlib
from typing import Any

from forgegym.family import EnvSpec, Family, register_family

__all__ = [
    "FAMILY",
    "BugfixEnv",
    "BugfixGenerator",
    "BugfixGeneratorConfig",
    "BugfixGrader",
    "BugfixTaskBank",
]

FAMILY = register_family(
    Family(
        name="bugfix",
        package=__name__,  # solved, scanners, partial, hacks, bench, stats: by convention
        envs=(EnvSpec("Forge/Bugfix-v0"),),
        env_class="forgegym.envs.bugfix.env:BugfixEnv",
        task_bank="forgegym.envs.bugfix.bank:BugfixTaskBank",
        grader="forgegym.envs.bugfix.grader:BugfixGrader",
        description="repair a module whose behaviour injected bugs broke",
    )
)

_LAZY = {
    "BugfixEnv": "forgegym.envs.bugfix.env",
    "BugfixGenerator": "forgegym.envs.bugfix.generator",
    "BugfixGeneratorConfig": "forgegym.envs.bugfix.generator",
    "BugfixGrader": "forgegym.envs.bugfix.grader",
    "BugfixTaskBank": "forgegym.envs.bugfix.bank",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
