"""``Forge/Refactor-v0``: behaviour-preserving refactoring graded by hidden differential
checks, the public API extracted with libcst, integrity checks and structure terms.
See :class:`forgegym.envs.refactor.env.RefactorEnv`.

The package import stays light (the sandbox imports :mod:`.driver` in every grading
child); the public names load on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RefactorEnv", "RefactorGrader", "RefactorTaskBank"]


def __getattr__(name: str) -> Any:
    if name == "RefactorEnv":
        from forgegym.envs.refactor.env import RefactorEnv

        return RefactorEnv
    if name == "RefactorGrader":
        from forgegym.envs.refactor.grader import RefactorGrader

        return RefactorGrader
    if name == "RefactorTaskBank":
        from forgegym.envs.refactor.bank import RefactorTaskBank

        return RefactorTaskBank
    raise AttributeError(name)
