"""Per-family registries of scripted actions: the reference solution and known hacks.

A family registers functions ``Task -> action text``. The baseline policies
(:mod:`forgegym.policies`) and task validation (``forgegym tasks verify``) use them,
so every known hack a family names is checked on every task it serves.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from forgegym.core.task import Task

__all__ = [
    "ActionFn",
    "default_reference_action",
    "hacks_for",
    "reference_action_for",
    "register_hack",
    "register_reference",
]

ActionFn = Callable[[Task], str]

_REFERENCES: dict[str, ActionFn] = {}
_HACKS: dict[str, dict[str, ActionFn]] = {}


def default_reference_action(task: Task) -> str:
    """Replace every file the reference changes with its reference content, then submit."""
    edits = [
        {"path": path, "content": content}
        for path, content in sorted(task.reference.items())
        if task.files.get(path) != content
    ]
    actions: list[dict[str, object]] = []
    if edits:
        actions.append({"action": "edit", "edits": edits})
    actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


def register_reference(family: str, fn: ActionFn) -> None:
    _REFERENCES[family] = fn


def reference_action_for(family: str) -> ActionFn:
    return _REFERENCES.get(family, default_reference_action)


def register_hack(family: str, name: str, fn: ActionFn) -> None:
    if not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"name: hack names are identifiers, got {name!r}")
    _HACKS.setdefault(family, {})[name] = fn


def hacks_for(family: str) -> dict[str, ActionFn]:
    return dict(_HACKS.get(family, {}))
