"""``Forge/Bugfix-v0``: procedurally generated bug-fix tasks graded by hidden
differential checks. See :class:`forgegym.envs.bugfix.env.BugfixEnv`.

Registers the family on import (import-light: everything heavy is a lazy reference).
"""

from __future__ import annotations

from forgegym.family import EnvSpec, Family, lazy_exports, register_family

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
