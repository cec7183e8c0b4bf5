"""The visible test of the API a refactoring creates (issue #37, design note 006 D3).

A Refactor task whose refactoring creates a path (a renamed function, a package
submodule) shows one visible test that imports that path and checks one of its hidden
inputs against the original's outcome, ``test_new_api``. It fails on the shown code in
every such task (the path does not exist yet: an ``ImportError``) and passes once the
refactoring is done. Like the hidden steps marked ``n`` (:func:`.spec.step`), it counts
once its path exists (:func:`visible_verdicts`): a partial refactoring that has not
created the path yet keeps the credit it had before the test was added. It is what
a canary contradicts (:mod:`.canaries`): a contradicted value in it fails on the shown
code for the same reason as the task's own, so running the visible tests before
refactoring says nothing about which one it is.

Only stateless checks with a plain JSON argument list and a plain, exact expected value
(no float, no tagged container) qualify; the input is one the other visible tests do
not call the function with (a canary may then special-case it without contradicting
another visible test).
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Sequence
from typing import Any

from forgegym.tasklib.canaries import json_plain, python_literal

__all__ = ["API_TEST", "api_test_target", "new_api_test", "visible_verdicts"]

#: The name of the test (the last test of the task's visible test file).
API_TEST = "test_new_api"


def _plain(value: Any) -> bool:
    """JSON-plain without floats or dicts (the manifest tags dicts and tuples)."""
    if isinstance(value, (float, dict)):
        return False
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return json_plain(value)


def _shown_calls(test_source: str) -> set[tuple[str, str]]:
    """``(function, json args)`` of every call with literal arguments in the tests."""
    out: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(test_source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            try:
                args = [ast.literal_eval(a) for a in node.args]
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            out.add((node.func.id, json.dumps(args, sort_keys=True, default=repr)))
    return out


def new_api_test(
    task_id: str,
    test_source: str,
    checks: Sequence[Sequence[dict[str, Any]]],
    expected: Sequence[Sequence[dict[str, Any]]],
) -> str | None:
    """``test_source`` with :data:`API_TEST` appended, or ``None`` when no step of the
    checks calls a path the refactoring creates with a usable input (see the module
    docstring). Deterministic in ``task_id``."""
    if len(checks) != 1:  # stateful checks: a call's outcome depends on the calls before
        return None
    shown = _shown_calls(test_source)
    candidates: list[tuple[str, str, list[Any], Any]] = []
    for step, outcome in zip(checks[0], expected[0], strict=True):
        module, _, name = str(step["t"]).partition(":")
        if not step.get("n") or "." in name or step.get("w") or set(outcome) != {"v"}:
            continue
        original = str(step["o"]).partition(":")[2]
        args, value = step["a"], outcome["v"]
        if not (_plain(args) and _plain(value)):
            continue
        key = json.dumps(args, sort_keys=True)
        if (original, key) in shown or (name, key) in shown:
            continue
        candidates.append((module, name, list(args), value))
    if not candidates:
        return None
    module, name, args, value = random.Random(f"new-api:{task_id}").choice(candidates)
    call = ", ".join(python_literal(a, like=test_source) for a in args)
    test = (
        f"\n\ndef {API_TEST}():\n"
        f"    from {module} import {name}\n\n"
        f"    assert {name}({call}) == {python_literal(value, like=test_source)}\n"
    )
    return test_source.rstrip("\n") + "\n" + test


def api_test_target(task_files: dict[str, str], test_path: str) -> str | None:
    """``"module:name"`` that the file's :data:`API_TEST` imports, or ``None``."""
    source = task_files.get(test_path)
    if source is None or f"def {API_TEST}():" not in source:
        return None
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == API_TEST:
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module and inner.names:
                    return f"{inner.module}:{inner.names[0].name}"
    return None


def visible_verdicts(
    verdicts: dict[str, bool], task_files: dict[str, str], test_paths: Sequence[str], present: Any
) -> dict[str, bool]:
    """``verdicts`` without :data:`API_TEST` while the path it imports does not exist
    (``present(target) -> bool``): like a hidden step on a path the refactoring creates,
    it counts once that path exists."""
    out = dict(verdicts)
    for path in test_paths:
        target = api_test_target(task_files, path)
        if target is not None and not present(target):
            out.pop(f"{path}::{API_TEST}", None)
    return out
