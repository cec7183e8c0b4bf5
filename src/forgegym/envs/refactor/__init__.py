"""``Forge/Refactor-v0``: behaviour-preserving refactoring graded by hidden differential
checks, the public API extracted with libcst, integrity checks and structure terms.
See :class:`forgegym.envs.refactor.env.RefactorEnv`.

Registers the family on import (import-light: the sandbox child imports
:mod:`.driver` from this package; everything heavy is a lazy reference).
"""

from __future__ import annotations

from forgegym.family import Family, lazy_exports, register_family

__all__ = ["FAMILY", "RefactorEnv", "RefactorGrader", "RefactorTaskBank", "refactor_task"]

# Everything by convention (see forgegym.family): env:RefactorEnv, bank:RefactorTaskBank,
# grader:RefactorGrader, actions:ACTIONS,
# scan:scan_submission, policies:reference_action/partial_action,
# hacks:HACKS, bench:run_bench, bank:bank_stats.
FAMILY = register_family(
    Family.in_package(
        __name__,
        "Forge/Refactor-v0",
        description="restructure code without changing behaviour or public API",
    )
)

__getattr__ = lazy_exports(
    __name__,
    {
        "RefactorEnv": "env",
        "RefactorGrader": "grader",
        "RefactorTaskBank": "bank",
        "refactor_task": "user",
    },
)
