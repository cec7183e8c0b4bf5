"""Family-independent environment machinery."""

from forgegym.core.actions import ActionSet, ParseResult, parse_actions
from forgegym.core.env import ForgeEnv, StepOutcome
from forgegym.core.spaces import UnicodeText
from forgegym.core.task import Task, TaskBank, UnknownTaskError

__all__ = [
    "ActionSet",
    "ForgeEnv",
    "ParseResult",
    "StepOutcome",
    "Task",
    "TaskBank",
    "UnicodeText",
    "UnknownTaskError",
    "parse_actions",
]
