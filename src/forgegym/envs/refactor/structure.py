"""Structure requirements: is the asked-for shape there?

Each requirement is a JSON object with a ``req`` name (see :data:`REQUIREMENTS`);
:func:`structure_score` returns the fraction met and what was missed. Every task's
requirements are all unmet in its starting files (validation checks it), so the
fraction measures progress made by the refactoring itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from forgegym.envs.refactor.analysis import ast_size, clone_counts, complexity, function_defs, parse

__all__ = ["REQUIREMENTS", "structure_score"]

Files = Mapping[str, str]


def _trees(files: Files) -> dict[str, ast.Module | None]:
    return {p: parse(c) for p, c in files.items() if p.endswith(".py")}


def _absent(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    return req["path"] not in files


def _exists(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    return req["path"] in files and trees.get(req["path"]) is not None


def _defines(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    if tree is None:
        return False
    defs = function_defs(tree)
    return all(name in defs for name in req["names"])


def _function(trees: Any, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for tree in trees.values():
        if tree is not None and name in function_defs(tree):
            return function_defs(tree)[name]
    return None


def _calls(node: ast.AST) -> set[str]:
    out: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            func = child.func
            if isinstance(func, ast.Name):
                out.add(func.id)
            elif isinstance(func, ast.Attribute):
                out.add(func.attr)
    return out


def _deprecated_alias(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    if tree is None:
        return False
    alias = function_defs(tree).get(req["old"])
    if alias is None:
        return False
    warns = any(
        isinstance(c, ast.Call)
        and "warn" in _calls(c)
        and any(isinstance(n, ast.Name) and n.id == "DeprecationWarning" for n in ast.walk(c))
        for c in ast.walk(alias)
    )
    return warns and req["new"] in _calls(alias) and ast_size(alias) <= 60


def _imports_from(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    if tree is None:
        return False
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = node.module
    return all(bound.get(name) == module for name, module in req["names"].items())


def _not_defined(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    name = req["name"]
    for tree in trees.values():
        if tree is None:
            return False
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name == name:
                    return False
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if any((a.asname or a.name).split(".")[0] == name for a in node.names):
                    return False
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return False
    return True


def _unreachable(func: ast.AST) -> bool:
    for node in ast.walk(func):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(
                isinstance(stmt, (ast.Return, ast.Raise, ast.Continue, ast.Break))
                for stmt in body[:-1]
            ):
                return True
    return False


def _no_unreachable(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    func = _function(trees, req["function"])
    return func is not None and not _unreachable(func)


def _constant_if(func: ast.AST) -> bool:
    return any(
        isinstance(n, (ast.If, ast.While)) and isinstance(n.test, ast.Constant) and not n.test.value
        for n in ast.walk(func)
    )


def _no_constant_if(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    func = _function(trees, req["function"])
    return func is not None and not _constant_if(func)


def _no_local(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    func = _function(trees, req["function"])
    if func is None:
        return False
    return not any(
        isinstance(n, ast.Name) and n.id == req["name"] and isinstance(n.ctx, ast.Store)
        for n in ast.walk(func)
    )


def _max_complexity(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    if tree is None or req["function"] not in function_defs(tree):
        return False
    return all(complexity(f) <= req["bound"] for f in function_defs(tree).values())


def _function_complexity(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    func = _function(trees, req["function"])
    return func is not None and complexity(func) <= req["bound"]


def _function_size(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    """The function is at most ``bound`` AST nodes (docstring included): "simplify" or
    "shorten" asked of one function, where McCabe complexity need not drop."""
    func = _function(trees, req["function"])
    return func is not None and ast_size(func) <= req["bound"]


def _clones_below(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    if tree is None:
        return False
    counts = clone_counts(tree, int(req["window"]))
    return all(counts.get(key, 0) <= 1 for key in req["keys"])


def _shared_helper(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    """Every function in ``functions`` calls one common new function of the module."""
    tree = trees.get(req["path"])
    if tree is None:
        return False
    defs = function_defs(tree)
    if not all(f in defs for f in req["functions"]):
        return False
    called = [_calls(defs[f]) & set(defs) - set(req["functions"]) for f in req["functions"]]
    common = set.intersection(*called) if called else set()
    return bool(common)


def _no_global(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    return tree is not None and not any(
        isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(tree)
    )


_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "Counter", "OrderedDict", "deque"}


def _no_module_mutable(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    if tree is None:
        return False
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value
            if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp)):
                return False
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in _MUTABLE_CALLS
            ):
                return False
    return True


def _class_defined(files: Files, trees: Any, req: dict[str, Any]) -> bool:
    tree = trees.get(req["path"])
    if tree is None:
        return False
    defs = function_defs(tree)
    return any(isinstance(n, ast.ClassDef) and n.name == req["name"] for n in tree.body) and all(
        f"{req['name']}.{m}" in defs for m in req.get("methods", [])
    )


REQUIREMENTS: dict[str, Callable[[Files, Any, dict[str, Any]], bool]] = {
    "absent": _absent,
    "exists": _exists,
    "defines": _defines,
    "deprecated_alias": _deprecated_alias,
    "imports_from": _imports_from,
    "not_defined": _not_defined,
    "no_unreachable": _no_unreachable,
    "no_constant_if": _no_constant_if,
    "no_local": _no_local,
    "max_complexity": _max_complexity,
    "function_complexity": _function_complexity,
    "function_size": _function_size,
    "clones_below": _clones_below,
    "shared_helper": _shared_helper,
    "no_global": _no_global,
    "no_module_mutable": _no_module_mutable,
    "class_defined": _class_defined,
}


def describe(req: Mapping[str, Any]) -> str:
    fields = ", ".join(f"{k}={v}" for k, v in req.items() if k not in ("req", "keys"))
    return f"{req['req']}({fields})"


def structure_score(
    files: Files, requirements: Sequence[dict[str, Any]]
) -> tuple[float, list[str]]:
    """Fraction of ``requirements`` met by ``files`` and descriptions of those missed."""
    if not requirements:
        return 1.0, []
    trees = _trees(files)
    missed = [describe(r) for r in requirements if not REQUIREMENTS[r["req"]](files, trees, r)]
    return 1.0 - len(missed) / len(requirements), missed
