"""The visible test that fails on the shown code in every task of a kind (issue #37,
design note 006 D3/D6).

A Refactor task whose refactoring creates a path (a renamed function, a package
submodule) shows one visible test that imports that path and checks one of its hidden
inputs against the original's outcome, ``test_new_api``. It fails on the shown code in
every such task (the path does not exist yet: an ``ImportError``) and passes once the
refactoring is done. Like the hidden steps marked ``n`` (:func:`.spec.step`), it counts
once its path exists (:func:`visible_verdicts`): a partial refactoring that has not
created the path yet keeps the credit it had before the test was added. The task of any
other kind shows ``test_refactoring`` instead (:mod:`.visible_checks`): it checks the
structure the statement asks for and then one hidden input; it counts once the task's
structure is reached. Either is what a canary contradicts (:mod:`.canaries`): a
contradicted value in it fails on the shown code for the same reason as the task's own,
so running the visible tests before refactoring says nothing about which one it is.

Only stateless checks with a plain JSON argument list and a plain, exact expected value
(no float; a dict only with string keys) qualify; the input is one the other visible
tests do not call the function with (a canary may then special-case it without
contradicting another visible test). Where one can, the input is of a function a
disguised special case of which changes no other function (the canary's cheat must not
break other checks); for a path kind that may be a function that keeps its path, after
the import of the new one.
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from forgegym.envs.refactor.visible_checks import REFACTORING_TEST, structure_check
from forgegym.tasklib.canaries import (
    contradictable,
    disguised_guard,
    python_literal,
)

__all__ = [
    "API_TEST",
    "REFACTORING_TEST",
    "api_test_target",
    "called_by_others",
    "decoded",
    "defining_file",
    "encoded",
    "new_api_test",
    "refactoring_test",
    "visible_verdicts",
]

#: The name of the test (the last test of the task's visible test file).
API_TEST = "test_new_api"


def _plain(value: Any) -> bool:
    """JSON-plain without floats or dicts (the manifest tags dicts and tuples); by type,
    as the values come from JSON (a task is built at every reset)."""
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, str))


_NOT_EXACT = object()


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        items = [_decode(v) for v in value]
        return _NOT_EXACT if any(i is _NOT_EXACT for i in items) else items
    if isinstance(value, dict):
        pairs = value.get("<dict>")
        if (
            set(value) != {"<dict>"}
            or not isinstance(pairs, list)
            or not all(isinstance(k, str) for k, _ in pairs)
        ):
            return _NOT_EXACT
        out = {k: _decode(v) for k, v in pairs}
        return _NOT_EXACT if any(v is _NOT_EXACT for v in out.values()) else out
    return value if value is None or isinstance(value, (bool, int, str)) else _NOT_EXACT


def decoded(value: Any) -> Any:
    """A hidden outcome's value as the test writes it: a tagged dict of string keys
    (``{"<dict>": [[k, v], ...]}``) as a dict, ``None`` for anything else tagged or
    not exact (a float; see :func:`_plain`)."""
    out = _decode(value)
    return None if out is _NOT_EXACT else out


def encoded(value: Any) -> Any:
    """The inverse of :func:`decoded` (how the hidden steps store a value)."""
    if isinstance(value, dict):
        return {"<dict>": [[k, encoded(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [encoded(v) for v in value]
    return value


def _shown_calls(test_source: str) -> set[tuple[str, str]]:
    """``(function, json args)`` of every call with literal arguments in the tests
    (``f(...)`` and ``module.f(...)``)."""
    out: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(test_source)):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            try:
                args = [ast.literal_eval(a) for a in node.args]
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            out.add((name, json.dumps(args, sort_keys=True, default=repr)))
    return out


def defining_file(files: Mapping[str, str], name: str) -> str | None:
    """The one file defining ``name`` at module level that a disguised guard can patch."""
    for path, source in sorted(files.items()):
        if path.endswith(".py") and disguised_guard(source, name, []) is not None:
            return path
    return None


def called_by_others(files: Mapping[str, str], function: str, alias: str | None) -> bool:
    """Whether a function of ``files`` other than ``function`` itself and its deprecated
    ``alias`` uses ``function``: a special case of one of its inputs would then change
    that function's results too (and the hidden checks on it)."""
    for path, source in files.items():
        if not path.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if node.name in (function, alias):
                continue
            for inner in ast.walk(node):
                if (isinstance(inner, ast.Name) and inner.id == function) or (
                    isinstance(inner, ast.Attribute) and inner.attr == function
                ):
                    return True
    return False


#: ``(module, function, args, value, new)`` of one hidden step a test may check.
_Candidate = tuple[str, str, list[Any], Any, bool]


def _candidates(
    test_source: str,
    checks: Sequence[Sequence[dict[str, Any]]],
    expected: Sequence[Sequence[dict[str, Any]]],
) -> list[_Candidate]:
    """The stateless steps with a plain argument list and an exact, plain (or
    string-keyed dict) value on an input the visible tests do not call."""
    if len(checks) != 1:  # stateful checks: a call's outcome depends on the calls before
        return []
    shown = _shown_calls(test_source)
    out: list[_Candidate] = []
    for step, outcome in zip(checks[0], expected[0], strict=True):
        module, _, name = str(step["t"]).partition(":")
        if "." in name or step.get("w") or set(outcome) != {"v"}:
            continue
        original = str(step["o"]).partition(":")[2]
        args, value = step["a"], decoded(outcome["v"])
        if not _plain(args) or value is None and outcome["v"] is not None:
            continue
        key = json.dumps(args, sort_keys=True)
        if (original, key) in shown or (name, key) in shown:
            continue
        out.append((module, name, list(args), value, bool(step.get("n"))))
    return out


def _cheatable(
    files: Mapping[str, str], aliases: Mapping[str, str]
) -> Callable[[_Candidate], bool]:
    """Whether a canary could contradict a candidate: a disguised special case of its
    function (the validation's cheat) applies and changes no other function's results
    (what :func:`called_by_others`, :func:`defining_file` and
    :func:`~forgegym.tasklib.canaries.disguised_guard` decide, from one parse of each
    file: a task is built at every reset)."""
    arity: dict[str, int] = {}  # guardable module-level functions, first file first
    users: dict[str, set[str]] = {}
    for path, source in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        tree = ast.parse(source)
        for node in tree.body:
            if (
                isinstance(node, ast.FunctionDef)
                and node.name not in arity
                and not (node.args.vararg or node.args.kwonlyargs or node.decorator_list)
                and node.body[0].col_offset == 4
            ):
                arity[node.name] = len(node.args.posonlyargs) + len(node.args.args)
        for found in ast.walk(tree):
            if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(found):
                    if isinstance(inner, ast.Name):
                        users.setdefault(inner.id, set()).add(found.name)
                    elif isinstance(inner, ast.Attribute):
                        users.setdefault(inner.attr, set()).add(found.name)

    def ok(candidate: _Candidate) -> bool:
        _, name, args, value, _ = candidate
        others = users.get(name, set()) - {name, aliases.get(name)}
        return contradictable(value) and not others and arity.get(name) == len(args)

    return ok


def _assertion(candidate: _Candidate, like: str) -> list[str]:
    module, name, args, value, _ = candidate
    call = ", ".join(python_literal(a, like=like) for a in args)
    return [
        f"    from {module} import {name}\n",
        "\n",
        f"    assert {name}({call}) == {python_literal(value, like=like)}\n",
    ]


def refactoring_test(
    task_id: str,
    kind: str,
    module: str,
    test_source: str,
    checks: Sequence[Sequence[dict[str, Any]]],
    expected: Sequence[Sequence[dict[str, Any]]],
    *,
    structure: Sequence[Mapping[str, Any]] = (),
    reference: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> tuple[str, str] | None:
    """``(test_source with the test appended, the test's name)``, or ``None``.

    A task whose refactoring creates a path gets :data:`API_TEST`: it imports a path the
    refactoring creates and checks one hidden input. Any other kind gets
    :data:`REFACTORING_TEST`: the structure the statement asks for
    (:func:`.visible_checks.structure_check`), then one hidden input. Either fails on
    the shown code in every task of its kind. The input is, where one is, an input of a
    function whose special case changes no other function's results in the
    ``reference`` files (``aliases``: function -> its deprecated alias), so that a
    canary can contradict it (design note 006, D6). Deterministic in ``task_id``."""
    found = _candidates(test_source, checks, expected)
    ok = _cheatable(reference or {}, aliases or {})
    usable = [c for c in found if ok(c)]
    new_paths = sorted(
        {
            str(s["t"])
            for seq in checks
            for s in seq
            if s.get("n") and "." not in str(s["t"]).partition(":")[2]
        }
    )
    lines: list[str]
    helpers = ""
    if new_paths:
        name = API_TEST
        new = [c for c in found if c[4]]
        chosen: _Candidate | None = None
        if new:
            # The draw the test was first made with; kept where a canary can take it.
            chosen = random.Random(f"new-api:{task_id}").choice(new)
        if chosen is None or not ok(chosen):
            preferred = [c for c in usable if c[4]] or usable
            if preferred:
                chosen = random.Random(f"new-api:{task_id}:cheatable").choice(preferred)
        if chosen is None:
            return None
        lines = _assertion(chosen, test_source)
        if not chosen[4]:
            # The value is of a function that keeps its path: import a new path first.
            path_module, _, path_name = new_paths[0].partition(":")
            lines = [f"    from {path_module} import {path_name}\n", *lines]
            lines.insert(-1, f"    assert callable({path_name})\n")
    else:
        made = structure_check(kind, module, structure)
        if made is None:
            return None
        name = REFACTORING_TEST
        helpers, lines = made
        pool = usable or found
        if pool and kind != "state_to_object":
            chosen = random.Random(f"refactoring:{task_id}").choice(pool)
            lines = [*lines, "\n", *_assertion(chosen, test_source)]
    test = f"{helpers}\n\ndef {name}():\n" + "".join(lines)
    return test_source.rstrip("\n") + "\n" + test, name


def new_api_test(
    task_id: str,
    test_source: str,
    checks: Sequence[Sequence[dict[str, Any]]],
    expected: Sequence[Sequence[dict[str, Any]]],
) -> str | None:
    """``test_source`` with :data:`API_TEST` appended (a task whose refactoring creates
    a path; no reference files: the first draw), or ``None``."""
    made = refactoring_test(task_id, "", "", test_source, checks, expected)
    return None if made is None or made[1] != API_TEST else made[0]


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
    verdicts: dict[str, bool],
    task_files: dict[str, str],
    test_paths: Sequence[str],
    present: Any,
    structure_reached: bool = True,
) -> dict[str, bool]:
    """``verdicts`` without :data:`API_TEST` while the path it imports does not exist
    (``present(target) -> bool``): like a hidden step on a path the refactoring creates,
    it counts once that path exists. Likewise without :data:`REFACTORING_TEST` until
    the structure the task asks for is reached (the grader's structure score): it checks
    that structure first, so before then it says nothing a structure term does not."""
    out = dict(verdicts)
    for path in test_paths:
        target = api_test_target(task_files, path)
        if target is not None and not present(target):
            out.pop(f"{path}::{API_TEST}", None)
        if not structure_reached:
            out.pop(f"{path}::{REFACTORING_TEST}", None)
    return out
