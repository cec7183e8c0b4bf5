"""``Forge/Bugfix-v0``: procedurally generated bug-fix tasks graded by hidden
differential checks. See :class:`forgegym.envs.bugfix.env.BugfixEnv`."""

from forgegym.envs.bugfix.bank import BugfixTaskBank
from forgegym.envs.bugfix.env import BugfixEnv
from forgegym.envs.bugfix.generator import BugfixGenerator, BugfixGeneratorConfig
from forgegym.envs.bugfix.grader import BugfixGrader

__all__ = [
    "BugfixEnv",
    "BugfixGenerator",
    "BugfixGeneratorConfig",
    "BugfixGrader",
    "BugfixTaskBank",
]
