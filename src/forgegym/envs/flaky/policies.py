"""Scripted policies of FlakyRepair: the reference fix (with its diagnosis) and the
partial fix (one of two root causes)."""

from __future__ import annotations

import json

from forgegym.core.task import Task
from forgegym.envs.flaky.hidden import FlakyHidden

__all__ = ["edit_action", "partial_action", "reference_action"]


def edit_action(
    task: Task, files: dict[str, str], diagnosis: dict[str, object] | None = None
) -> str:
    edits = [{"path": p, "content": c} for p, c in sorted(files.items()) if task.files.get(p) != c]
    actions: list[dict[str, object]] = []
    if edits:
        edit: dict[str, object] = {"action": "edit", "edits": edits}
        if diagnosis:
            edit["diagnosis"] = diagnosis
        actions.append(edit)
    actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


def reference_action(task: Task) -> str:
    """The reference fix with the true diagnosis and a calibrated confidence."""
    hidden = FlakyHidden.of(task)
    diagnosis: dict[str, object] = {
        "category": hidden.category,
        "location": hidden.location,
        "confidence": 0.95,
        "claims": [hidden.summary],
    }
    return edit_action(task, dict(task.reference), diagnosis)


def partial_action(task: Task) -> str | None:
    """A legitimate fix of one of the task's two root causes (``None`` if the template
    has no partial): it raises the pass rate without reaching 1.0."""
    partial = FlakyHidden.of(task).partial
    return None if not partial else edit_action(task, dict(partial))
