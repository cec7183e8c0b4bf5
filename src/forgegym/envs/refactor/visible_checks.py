"""The structure part of the visible refactoring test of the kinds that create no path.

Issue #37, design note 006 D3/D6: a canary contradicts one value of a visible test that
fails on the shown code in *every* task of its kind, so that running the visible tests
before refactoring says nothing about which one is a canary. The kinds whose refactoring
creates a path have ``test_new_api`` (:mod:`.api_test`: its import fails until the path
exists). The other kinds get :data:`REFACTORING_TEST`, which first checks the structure
the statement already asks for, and then (:mod:`.api_test`) one hidden input's value:

- ``reduce_complexity``: every function of the module at or under the stated bound
  (the grader's McCabe count, :func:`.analysis.complexity`);
- ``extract_helper``: the named functions all call one common other function of the
  module (the grader's ``shared_helper``);
- ``dead_code``: no dead code of the kinds the statement lists, counted generically
  (unused imports, unused private module-level names, statements after a
  ``return``/``raise``, constant-false ``if`` blocks, locals never read). The count is
  what the test shows, not the names: it says no more than the statement's "remove all
  of it", and nothing about which helper at the hardest level is the live distractor;
- ``state_to_object``: the stated class with its stated methods (no value: its checks
  are stateful, a special case of one call would change the sequences after it).

Each snippet is a function of the task's structure requirements only; the bank checks
that it fails on the shown code and passes on the reference (``tests``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["REFACTORING_TEST", "structure_check"]

#: The name of the test of the kinds that create no path.
REFACTORING_TEST = "test_refactoring"

_TREE = '''

def _module_tree(name):
    """The parsed source of the module ``name`` (as imported)."""
    import ast
    import importlib
    import inspect

    return ast.parse(inspect.getsource(importlib.import_module(name)))
'''

_COMPLEXITY = '''

def _complexity(function):
    """McCabe complexity: 1 + branches + boolean operands beyond the first."""
    import ast

    decisions = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp)
    count = 1
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (*decisions, ast.Assert, ast.match_case)):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        stack.extend(ast.iter_child_nodes(node))
    return count
'''

_DEAD_CODE = '''

def _dead_code(tree):
    """How much dead code the module has: unused imports and private names, statements
    after a return or raise, constant-false ifs, locals never read."""
    import ast

    def loads(node):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}

    used = loads(tree)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            used |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
    found = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", "") != "__future__":
            found += sum((a.asname or a.name).split(".")[0] not in used for a in node.names)
        names = [getattr(t, "id", "") for t in getattr(node, "targets", [])]
        names += [getattr(node, "name", "")]
        found += sum(n.startswith("_") and not n.startswith("__") and n not in used for n in names)
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                found += sum(isinstance(s, (ast.Return, ast.Raise)) for s in block[:-1])
        if isinstance(node, ast.If) and isinstance(node.test, ast.Constant) and not node.test.value:
            found += 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            read = loads(node) | {n for s in ast.walk(node) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assign):
                    found += sum(isinstance(t, ast.Name) and t.id not in read for t in inner.targets)
    return found
'''


def _path_module(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def _requirement(structure: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    return next((r for r in structure if r.get("req") == name), None)


def structure_check(
    kind: str, module: str, structure: Sequence[Mapping[str, Any]]
) -> tuple[str, list[str]] | None:
    """``(helpers, lines)``: the module-level helpers the test file needs and the test's
    first lines (indented), which check the structure the statement asks for, or
    ``None`` when the kind has none (the path kinds, :mod:`.api_test`)."""
    if kind == "reduce_complexity":
        req = _requirement(structure, "max_complexity")
        if req is None:
            return None
        target = _path_module(str(req["path"]))
        return _TREE + _COMPLEXITY, [
            "    import ast\n",
            "\n",
            f'    tree = _module_tree("{target}")\n',
            "    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]\n",
            f"    assert max(_complexity(f) for f in functions) <= {int(req['bound'])}\n",
        ]
    if kind == "extract_helper":
        req = _requirement(structure, "shared_helper")
        if req is None:
            return None
        target = _path_module(str(req["path"]))
        named = ", ".join(f'"{f}"' for f in req["functions"])
        return _TREE, [
            "    import ast\n",
            "\n",
            f'    tree = _module_tree("{target}")\n',
            "    defined = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}\n",
            f"    named = [{named}]\n",
            "    called = [\n",
            "        {c.func.id for c in ast.walk(defined[f]) if isinstance(c, ast.Call)\n",
            "         and isinstance(c.func, ast.Name)} & set(defined) - set(named)\n",
            "        for f in named\n",
            "    ]\n",
            "    assert set.intersection(*called)  # one helper that each of them calls\n",
        ]
    if kind == "dead_code":
        return _TREE + _DEAD_CODE, [f'    assert _dead_code(_module_tree("{module}")) == 0\n']
    if kind == "state_to_object":
        req = _requirement(structure, "class_defined")
        if req is None:
            return None
        target, name = _path_module(str(req["path"])), str(req["name"])
        methods = ", ".join(f'"{m}"' for m in req.get("methods", []))
        return "", [
            f"    from {target} import {name}\n",
            "\n",
            f"    assert all(callable(getattr({name}, m, None)) for m in [{methods}])\n",
        ]
    return None
