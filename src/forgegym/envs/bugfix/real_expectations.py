"""The literal expectations of a real project's test files that a real-bank canary can
contradict (issue #37, design note 006 D4; :mod:`.real_canaries` plans on them).

An expectation is ``assert <call> == <literal>`` or ``self.assertEqual(...)`` (either
side), the call ``f(...)``, ``a.b.f(...)`` or ``<expression>.f(...)`` with literal
arguments, or one case of a ``@pytest.mark.parametrize`` test whose case list is literal
(the case's values standing for its names; its id as pytest derives it). Parses are
cached by file content: a project's test files are the same in all its tasks.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from forgegym.tasklib.canaries import contradict_one_off, contradictable, json_plain

__all__ = [
    "Expectation",
    "bound_locally",
    "expectation_summary",
    "expectations",
    "imported_names",
    "literal",
    "test_functions",
]


class Expectation(NamedTuple):
    """One literal expectation on a call in a test file."""

    test: str  # ``name`` or ``Class::name``
    node: ast.expr  # the expected literal
    receiver: str  # "" for ``f(...)``, ``m`` for ``m.f(...)``
    name: str  # the called function
    args: list[Any]
    kwargs: dict[str, Any]
    expected: Any
    renamed: str = ""  # a parametrised case's test name once contradicted, if it changes


def literal(node: ast.expr) -> tuple[bool, Any]:
    """``(ok, value)``: a literal whose JSON text the guard can key on (tuples as lists)."""
    try:
        value = ast.literal_eval(node)
        json.dumps(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    return True, value


def _compared(inner: ast.AST) -> tuple[ast.Call, ast.expr] | None:
    """``(call, expected)`` of ``assert a == b`` or ``self.assertEqual(a, b)`` where one
    side is a call (the other, either side, the expectation)."""
    pair: tuple[ast.expr, ast.expr] | None = None
    if (
        isinstance(inner, ast.Assert)
        and isinstance(inner.test, ast.Compare)
        and len(inner.test.ops) == 1
        and isinstance(inner.test.ops[0], ast.Eq)
    ):
        pair = (inner.test.left, inner.test.comparators[0])
    elif (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and inner.func.attr in ("assertEqual", "assertEquals")
        and len(inner.args) == 2
        and not inner.keywords
    ):
        pair = (inner.args[0], inner.args[1])
    if pair is None:
        return None
    left, right = pair
    if isinstance(left, ast.Call):
        return left, right
    if isinstance(right, ast.Call):
        return right, left
    return None


def _id_part(value: Any, present: bool, argname: str, index: int) -> str:
    """pytest's id of one parameter value (``_idval``: strings ASCII-escaped, numbers,
    bools and ``None`` as ``str``; anything else ``<argname><row index>``)."""
    if present and isinstance(value, str):
        return value.encode("unicode_escape").decode("ascii")
    if present and (value is None or isinstance(value, (bool, int, float))):
        return str(value)
    return f"{argname}{index}"


class _Row(NamedTuple):
    """One case of a parametrised test: its values by name and its explicit id."""

    nodes: dict[str, ast.expr]
    explicit_id: str | None


def _parametrization(
    test_function: ast.FunctionDef, tree: ast.Module
) -> tuple[list[str], list[_Row]] | None:
    """``(argnames, rows)`` of a test with exactly one ``@pytest.mark.parametrize`` (its
    cases a literal list in the decorator or in a module-level name), else ``None``."""
    marks = [
        d
        for d in test_function.decorator_list
        if isinstance(d, ast.Call) and (_dotted(d.func) or "").endswith("parametrize")
    ]
    if len(marks) != 1 or len(marks[0].args) < 2:
        return None
    mark = marks[0]
    try:
        names = ast.literal_eval(mark.args[0])
    except (ValueError, TypeError, SyntaxError):
        return None
    argnames = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    cases = mark.args[1]
    if isinstance(cases, ast.Name):
        assigned = [
            n.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == cases.id for t in n.targets)
        ]
        cases = assigned[-1] if len(assigned) == 1 else cases
    if not isinstance(cases, (ast.List, ast.Tuple)):
        return None
    ids: list[Any] | None = None
    for keyword in mark.keywords:
        if keyword.arg == "ids":
            try:
                ids = list(ast.literal_eval(keyword.value))
            except (ValueError, TypeError, SyntaxError):
                return None  # ids computed by a function: unknown here
    rows: list[_Row] = []
    for index, case in enumerate(cases.elts):
        explicit = ids[index] if ids is not None and index < len(ids) else None
        if isinstance(case, ast.Call) and (_dotted(case.func) or "").endswith("param"):
            for keyword in case.keywords:
                if keyword.arg == "id" and isinstance(keyword.value, ast.Constant):
                    explicit = str(keyword.value.value)
            values = list(case.args)
        elif len(argnames) == 1:
            values = [case]
        elif isinstance(case, (ast.Tuple, ast.List)):
            values = list(case.elts)
        else:
            return None
        if len(values) != len(argnames):
            return None
        rows.append(_Row(dict(zip(argnames, values, strict=True)), explicit))
    return argnames, rows


def test_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef]]:
    tests: list[tuple[str, ast.FunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            tests.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            tests += [
                (f"{node.name}::{m.name}", m)
                for m in node.body
                if isinstance(m, ast.FunctionDef) and m.name.startswith("test")
            ]
    return tests


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` of a chain of names, else ``None``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _call_target(call: ast.Call) -> tuple[str, str] | None:
    """``(receiver, name)`` of a call: ``f(...)`` (``""``), ``a.b.f(...)`` (``a.b``) or
    ``<expression>.f(...)`` (``"()"``)."""
    if isinstance(call.func, ast.Name):
        return "", call.func.id
    if isinstance(call.func, ast.Attribute):
        return _dotted(call.func.value) or "()", call.func.attr
    return None


def _loads(function: ast.FunctionDef, name: str) -> int:
    """How often ``function``'s body reads ``name`` (nested definitions included)."""
    return sum(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
        for statement in function.body
        for node in ast.walk(statement)
    )


def expectations(source: str) -> list[Expectation]:
    """Every literal expectation on a call with literal arguments (positional or
    keyword), per test function, in source order (of the expected literal): ``f(...)``,
    ``a.b.f(...)`` (receiver ``a.b``) or ``<expression>.f(...)`` (receiver ``"()"``);
    in a parametrised test, one per case, the arguments and the expectation the case's
    values (its test id ``test[<id>]``, and ``renamed`` the id it takes once its
    expected value is contradicted, where pytest derives the id from that value)."""
    tree = ast.parse(source)
    out: list[Expectation] = []
    for test, test_function in test_functions(tree):
        cases = _parametrization(test_function, tree)
        for inner in ast.walk(test_function):
            pair = _compared(inner)
            target = None if pair is None else _call_target(pair[0])
            if pair is None or target is None:
                continue
            call, expected_node = pair
            if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords
            ):
                continue
            if cases is None:
                found = _expectation(call, expected_node, {})
                if found is not None:
                    node, args, kwargs, expected = found
                    receiver, name = target
                    out.append(Expectation(test, node, receiver, name, args, kwargs, expected))
                continue
            argnames, rows = cases
            if (
                isinstance(expected_node, ast.Name)
                and expected_node.id in argnames
                and _loads(test_function, expected_node.id) != 1
            ):
                # The case's value stands elsewhere too (an argument, another
                # assertion, a nested hook): contradicting it changes those as well
                # (marshmallow's ``schema.load(data) == data``).
                continue
            for index, row in enumerate(rows):
                found = _expectation(call, expected_node, row.nodes)
                if found is None:
                    continue
                node, args, kwargs, expected = found
                parts, renamed_parts = [], []
                for name in argnames:
                    ok, value = literal(row.nodes[name])
                    parts.append(_id_part(value, ok, name, index))
                    if row.nodes[name] is node:
                        value = contradict_one_off(expected)
                    renamed_parts.append(_id_part(value, ok, name, index))
                case_id = row.explicit_id or "-".join(parts)
                renamed = row.explicit_id or "-".join(renamed_parts)
                named = f"{test}[{case_id}]"
                out.append(
                    Expectation(
                        named,
                        node,
                        *target,
                        args,
                        kwargs,
                        expected,
                        "" if renamed == case_id else f"{test}[{renamed}]",
                    )
                )
    return sorted(out, key=lambda e: (e.node.lineno, e.node.col_offset))


def _expectation(
    call: ast.Call, expected_node: ast.expr, case: Mapping[str, ast.expr]
) -> tuple[ast.expr, list[Any], dict[str, Any], Any] | None:
    """``(expected node, args, kwargs, expected)`` of one expectation, a
    parametrised case's names standing for its values, or ``None`` when an argument
    or the expectation is no literal (or cannot be contradicted)."""

    def resolve(node: ast.expr) -> ast.expr:
        return case[node.id] if isinstance(node, ast.Name) and node.id in case else node

    positional = [literal(resolve(a)) for a in call.args]
    keywords = {str(k.arg): literal(resolve(k.value)) for k in call.keywords}
    node = resolve(expected_node)
    ok, expected = literal(node)
    if not all(good for good, _ in [*positional, *keywords.values()]):
        return None
    if not ok or not json_plain(expected) or not contradictable(expected):
        return None
    if isinstance(expected, float):
        return None  # an approximate comparison would not contradict it reliably
    if case and node is expected_node:
        return None  # one literal for every case: not one case's contradiction
    args = [v for _, v in positional]
    return node, args, {k: v for k, (_, v) in keywords.items()}, expected


@functools.lru_cache(maxsize=4096)
def expectation_summary(
    source: str,
) -> tuple[tuple[str, str, str, str, str, str, str], ...]:
    """``(test, renamed, receiver, function, json args, json kwargs, json expected)`` of
    :func:`expectations`, cached (a project's test files are the same in all its
    tasks; planning reads every visible one); JSON, so no caller shares a mutable
    value."""
    return tuple(
        (
            e.test,
            e.renamed,
            e.receiver,
            e.name,
            json.dumps(e.args),
            json.dumps(e.kwargs),
            json.dumps(e.expected),
        )
        for e in expectations(source)
    )


@functools.lru_cache(maxsize=4096)
def imported_names(source: str) -> frozenset[str]:
    """Names the test file binds by importing (``from m import f``, ``import m``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            # ``from m import *`` adds "*": any name may be m's.
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return frozenset(names)


def _bindings(nodes: Sequence[ast.AST]) -> set[str]:
    """Names bound under ``nodes`` other than by importing: a ``def``, a class, an
    assignment, a parameter, a loop or ``with`` target."""
    names: set[str] = set()
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return names


@functools.lru_cache(maxsize=4096)
def bound_locally(source: str, test: str) -> frozenset[str]:
    """Names the test ``test`` (``name`` or ``Class::name``, a case id ignored) sees
    bound by the test file itself (at module level, or in the test): a call of one by
    its bare name is not the project's function, even where an import supplies one."""
    tree = ast.parse(source)
    module_level = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    names = {
        n.name for n in module_level if isinstance(n, (ast.FunctionDef, ast.ClassDef))
    } | _bindings([n for n in module_level if isinstance(n, (ast.Assign, ast.AnnAssign))])
    name = test.split("[")[0]
    inside = [f for t, f in test_functions(tree) if t == name]
    return frozenset(names | _bindings(inside))
