"""Bugfix tasks of several modules: the optimised path's one ruff run per batch gives
each submission exactly the lint (and so the reward) of linting it alone.

The bank's tasks have one module, but a Bugfix environment serves any tasks of the
family (``task_bank=TaskList([...])``), with several editable files and new files
allowed (``creatable``). Some ruff findings depend on the project layout, not only on
the file: an unused first-party import in an ``__init__.py`` reads "... consider
removing, adding to `__all__`, ..." and ``import mod`` is first-party when ``mod.py``
lies in the project root.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.task import Task, TaskList
from forgegym.policies import NOOP_ACTION


def _multi_module_task(task: Task, index: int) -> Task:
    """``task`` with a package beside its module whose ``__init__.py`` imports the
    module without using it (a finding of the starting state), and new ``.py`` files
    allowed at the top and in the package."""
    module = task.editable_files[0]
    init = "pkg/__init__.py"
    return Task(
        **{
            **task.model_dump(),
            "task_id": f"{task.task_id}/multi{index}",
            "files": {**task.files, init: f"import {module[:-3]}\n"},
            "editable_files": (module, init),
            "creatable": ("*.py", "pkg/*.py"),
        }
    )


def _action(edits: dict[str, str]) -> str:
    first = [{"action": "edit", "edits": [{"path": p, "content": c} for p, c in edits.items()]}]
    return json.dumps([*first, {"action": "submit"}])


def _completions(task: Task) -> list[str]:
    module = task.editable_files[0]
    name = module[:-3]
    fix = task.reference[module]
    init = task.files["pkg/__init__.py"]
    return [
        _action({module: fix}),  # the fix; the package's old finding stays
        _action({module: fix, "helpers.py": f"import os\nfrom {name} import *\n"}),
        _action({module: fix, "pkg/__init__.py": init + "import os\n"}),
        _action({module: fix, "pkg/__init__.py": f"from {name} import *  # noqa: F403\n"}),
        _action({module: fix, "pkg/extra.py": f"import {name}\n", "__init__.py": "import pkg\n"}),
        _action({module: fix, "pkg/use.py": f"from .. import {name}\nx = undefined\n"}),
        _action({"pkg/__init__.py": init + "import os\n"}),  # no fix, a new finding
        NOOP_ACTION,
    ]


def test_multi_module_submissions_lint_alike_on_both_paths() -> None:
    probe = gym.make("Forge/Bugfix-v0", max_steps=1).unwrapped
    try:
        ids = probe.task_bank.task_ids(2, seed=5)
        tasks = [_multi_module_task(probe.task_bank.get(t), i) for i, t in enumerate(ids)]
    finally:
        probe.close()
    items = [(task.task_id, c) for task in tasks for c in _completions(task)]
    fast = gym.make("Forge/Bugfix-v0", task_bank=TaskList(tasks), max_steps=1).unwrapped
    slow_env = gym.make(
        "Forge/Bugfix-v0", task_bank=TaskList(tasks), max_steps=1, optimised_grading=False
    )
    slow: Any = slow_env.unwrapped
    try:
        assert fast.optimised_grading and not slow.optimised_grading
        optimised = fast.grade_batch(items)  # both tasks' submissions in one ruff run
        reference = [
            r
            for task in tasks
            for r in slow.grade_completions(
                task.task_id, [c for t, c in items if t == task.task_id]
            )
        ]
    finally:
        fast.close()
        slow.close()
    lints = []
    for item, (r_fast, b_fast), (r_slow, b_slow) in zip(items, optimised, reference, strict=True):
        assert b_fast.terms.get("lint") == b_slow.terms.get("lint"), item
        assert (r_fast, b_fast.model_dump()) == (r_slow, b_slow.model_dump()), item
        lints.append(b_slow.terms["lint"].value if "lint" in b_slow.terms else None)
    # The test is about lint: the plain fix keeps full lint credit (the package's unused
    # import was there before), new unused imports and undefined names cost some.
    per_task = len(items) // len(tasks)
    for start in range(0, len(items), per_task):
        fix_lint, *others = lints[start : start + 6]
        hidden = optimised[start][1].terms["hidden"].value
        assert hidden > 0 and fix_lint == hidden, optimised[start][1]
        assert all(lint is not None and lint < fix_lint for lint in others[:2]), lints
