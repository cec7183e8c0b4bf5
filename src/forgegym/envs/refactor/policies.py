"""The reference refactoring and the partial policy of ``Forge/Refactor-v0``.

``reference_action`` writes the reference files and deletes what the reference
deletes; ``partial_action`` (``partial:api_kept``) does only the safe first part of the
refactoring (the API kept, the structure not reached). The known hacks are in
:mod:`.hacks`.
"""

from __future__ import annotations

import json
import re

from forgegym.core.task import Task
from forgegym.envs.refactor.hidden import RefactorHidden

__all__ = [
    "action_text",
    "edits_for",
    "module_path",
    "partial_action",
    "reference_action",
    "reference_files",
]


def action_text(edits: list[dict[str, object]]) -> str:
    actions: list[dict[str, object]] = []
    if edits:
        actions.append({"action": "edit", "edits": edits})
    actions.append({"action": "submit"})
    return "```json\n" + json.dumps(actions) + "\n```"


def reference_files(task: Task) -> tuple[dict[str, str], list[str]]:
    """The reference's written files and deleted files."""
    return dict(task.reference), list(RefactorHidden.of(task).reference_deleted)


def edits_for(task: Task, files: dict[str, str], deleted: list[str]) -> list[dict[str, object]]:
    edits: list[dict[str, object]] = [
        {"path": p, "content": c} for p, c in sorted(files.items()) if task.files.get(p) != c
    ]
    edits += [{"path": p, "delete": True} for p in deleted if p in task.files]
    return edits


def reference_action(task: Task) -> str:
    """Write the reference files, delete what the reference deletes, submit."""
    files, deleted = reference_files(task)
    return action_text(edits_for(task, files, deleted))


def module_path(task: Task) -> str:
    return f"{RefactorHidden.of(task).module}.py"


def partial_action(task: Task) -> str | None:
    """API and behaviour kept, structure only partly reached: the monolith moved into
    the package ``__init__`` (split); the new name with a plain alias that does not warn
    (rename); the class added but the module globals kept (state); the reference with
    the old code left beside it otherwise (which the integrity checks may gate)."""
    module = RefactorHidden.of(task).module
    kind = RefactorHidden.of(task).kind
    files, deleted = reference_files(task)
    path = module_path(task)
    if kind == "split_package":
        return action_text([{"path": path, "move_to": f"{module}/__init__.py"}])
    if kind == "rename_alias":
        text = task.files[path]
        for old, new in RefactorHidden.of(task).integrity["aliases"].items():
            text = re.sub(rf"\b{re.escape(old)}\b", new, text) + f"\n\n{old} = {new}\n"
        return action_text([{"path": path, "content": text}])
    if kind == "dead_code":
        # Only the unused imports and module constants go; the dead functions and
        # statements stay.
        names = {r["name"] for r in RefactorHidden.of(task).structure if r["req"] == "not_defined"}
        lines = task.files[path].splitlines(keepends=True)
        kept = [
            line
            for line in lines
            if not any(line == f"import {n}\n" or line.startswith(f"{n} = ") for n in names)
        ]
        if len(kept) == len(lines) or len(kept) + 2 * len(names) <= len(lines):
            return None
        return action_text([{"path": path, "content": "".join(kept)}])
    if kind == "state_to_object":
        reference = files[path]
        cls_start = reference.index("class ")
        cls_end = reference.index("\n\n\n_default")
        text = task.files[path].rstrip("\n") + "\n\n\n" + reference[cls_start:cls_end] + "\n"
        return action_text([{"path": path, "content": text}])
    return None
