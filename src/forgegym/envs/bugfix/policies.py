"""Scripted policies of ``Forge/Bugfix-v0`` besides the reference (the default one)."""

from __future__ import annotations

import json

from forgegym.core.task import Task
from forgegym.envs.bugfix.hidden import BugfixHidden
from forgegym.envs.bugfix.repo import is_repo_task
from forgegym.tasklib.mutations import Mutation, apply_mutations

__all__ = ["partial_action"]


def partial_action(task: Task) -> str | None:
    """Fix only the first injected bug and leave the others (``None`` on one-bug tasks,
    where fixing the first bug is the whole fix)."""
    if is_repo_task(task):
        return None  # your own repository: no injected bugs to leave in place
    hidden = BugfixHidden.of(task)
    mutations = [Mutation.from_json(m) for m in hidden.mutations]
    if len(mutations) < 2:
        return None
    module = hidden.mutated_file
    content = apply_mutations(task.reference[module], mutations[1:])
    actions = [
        {"action": "edit", "edits": [{"path": module, "content": content}]},
        {"action": "submit"},
    ]
    return "```json\n" + json.dumps(actions) + "\n```"
