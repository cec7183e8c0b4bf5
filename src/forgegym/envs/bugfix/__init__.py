"""``Forge/Bugfix-v0``: procedurally generated bug-fix tasks graded by hidden
differential checks. See :class:`forgegym.envs.bugfix.env.BugfixEnv`.

Registers the family on import (import-light: everything heavy is a lazy reference).
"""

from __future__ import annotations

from forgegym.family import Family, lazy_exports, register_family

__all__ = [
    "FAMILY",
    "BugfixEnv",
    "BugfixGenerator",
    "BugfixGeneratorConfig",
    "BugfixGrader",
    "BugfixTaskBank",
]

# Everything by convention: env:BugfixEnv, bank:BugfixTaskBank, grader:BugfixGrader,
# actions:ACTIONS, scan:scan_submission, partial, hacks, bench, stats (see forgegym.family).
FAMILY = register_family(
    Family.in_package(
        __name__,
        "Forge/Bugfix-v0",
        description="repair a module whose behaviour injected bugs broke",
    )
)

__getattr__ = lazy_exports(
    __name__,
    {
        "BugfixEnv": "env",
        "BugfixGenerator": "generator",
        "BugfixGeneratorConfig": "generator",
        "BugfixGrader": "grader",
        "BugfixTaskBank": "bank",
    },
)
