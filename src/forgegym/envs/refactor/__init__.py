"""``Forge/Refactor-v0``: behaviour-preserving refactoring graded by hidden differential
checks, the public API extracted with libcst, integrity checks and structure terms.
See :class:`forgegym.envs.refactor.env.RefactorEnv`.

Registers the family on import (import-light: the sandbox child imports
:mod:`.driver` from this package; everything heavy is a lazy reference).
"""

from __future__ import annotations

from forgegym.family import EnvSpec, Family, lazy_exports, register_family

__all__ = ["FAMILY", "RefactorEnv", "RefactorGrader", "RefactorTaskBank"]

FAMILY = register_family(
    Family(
        name="refactor",
        envs=(EnvSpec("Forge/Refactor-v0"),),
        env_class="forgegym.envs.refactor.env:RefactorEnv",
        task_bank="forgegym.envs.refactor.bank:RefactorTaskBank",
        action_models="forgegym.core.actions:CODE_ACTIONS",
        grader="forgegym.envs.refactor.grader:RefactorGrader",
        reference="forgegym.envs.refactor.hacks:reference_action",
        partial="forgegym.envs.refactor.hacks:partial_action",
        hacks="forgegym.envs.refactor.hacks:HACKS",
        bench="forgegym.envs.refactor.bench:run_bench",
        stats="forgegym.envs.refactor.bank:bank_stats",
        scanners={"refactor": "forgegym.envs.refactor.grader:scan_submission"},
        description="restructure code without changing behaviour or public API",
    )
)

__getattr__ = lazy_exports(
    __name__, {"RefactorEnv": "env", "RefactorGrader": "grader", "RefactorTaskBank": "bank"}
)
