"""Scripted policies of ``Forge/Performance-v0`` besides the reference (the default one)."""

from __future__ import annotations

import json

from forgegym.core.task import Task
from forgegym.envs.performance.catalog import structure
from forgegym.envs.performance.hidden import PerformanceHidden

__all__ = ["partial_action"]


def partial_action(task: Task) -> str | None:
    """A correct but naive (O(n) per operation) implementation: it earns the correctness
    credit and fails the complexity gate. ``None`` on naive tasks, where it is the start
    state (submitting it is the no-op)."""
    if PerformanceHidden.of(task).start == "naive":
        return None
    s = structure(PerformanceHidden.of(task).structure)
    actions = [
        {"action": "edit", "edits": [{"path": s.path, "content": s.source("naive")}]},
        {"action": "submit"},
    ]
    return "```json\n" + json.dumps(actions) + "\n```"
