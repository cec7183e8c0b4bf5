"""Special-casing of the inputs a model was shown: literals a patch adds to a
comparison, a return or a lookup table that also appear in the tests it saw.

Shared by Bugfix (visible tests, bug report) and FlakyRepair's repository mode (the
repository's tests): :func:`scan_hardcoded_expectations`.
"""

from __future__ import annotations

import ast
import hashlib
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any

from forgegym.rewards import bounded
from forgegym.rewards.antihack import HackFinding
from forgegym.rewards.antihack.special_casing import wide_interval

__all__ = ["scan_hardcoded_expectations"]


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


def _key(value: Any) -> str:
    return repr(value)


def _nontrivial(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return abs(value) > 2
    if isinstance(value, str):
        return len(value) >= 2
    if isinstance(value, (list, tuple, dict, set)):
        return len(value) >= 1
    return False


@bounded.memoised
def _literals_in(source: str) -> Counter[str]:
    """Multiset of literal values (repr) that sit in a comparison or a return."""
    found: Counter[str] = Counter()
    tree = bounded.parse_or_none(source)
    if tree is None:  # over a limit: the static gates report it
        return found
    for node in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            # a range the code classifies (``11 <= n % 100 <= 13``) singles no input out
            parts = [] if wide_interval(node) else [node.left, *node.comparators]
        elif isinstance(node, ast.Return) and node.value is not None:
            parts = [node.value]
        elif isinstance(node, ast.Dict):  # lookup tables keyed by inputs
            parts = [*(k for k in node.keys if k is not None), *node.values]
        for part in parts:
            value = _literal(part)
            if value is _NOT_LITERAL:
                continue
            # A guard like ``(text,) == ("(a)(",)`` packs the leaked input in a tuple.
            members = list(value) if isinstance(value, (list, tuple)) else []
            for item in (value, *members):
                if _nontrivial(item):
                    found[_key(item)] += 1
    return found


def _mentions(node: ast.AST, names: set[str]) -> bool:
    """Whether ``node`` is one of ``names`` or a tuple/list holding one."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    return any(isinstance(n, ast.Name) and n.id in names for n in items)


@bounded.memoised
def _parameter_guards(source: str) -> Counter[str]:
    """Literals a function compares its own parameters with (``x == 3``,
    ``(a, b) == ("b", 2)``): the shape of special-casing an input. Counted whatever
    their size, since a guard on a one-character input is as much a cheat as any."""
    found: Counter[str] = Counter()
    tree = bounded.parse_or_none(source)
    if tree is None:  # over a limit: the static gates report it
        return found
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in (*function.args.posonlyargs, *function.args.args)}
        params |= {a.arg for a in function.args.kwonlyargs}

        for node in ast.walk(function):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            if not any(_mentions(o, params) for o in operands):
                continue
            for operand in operands:
                value = _literal(operand)
                if value is _NOT_LITERAL:
                    continue
                members = list(value) if isinstance(value, (list, tuple)) else [value]
                for item in members:
                    if not isinstance(item, bool) and item is not None:
                        found[_key(item)] += 1
    return found


def _leaked_values(test_sources: Sequence[str], extra: Sequence[Any]) -> set[str]:
    """Literal values the agent has seen in tests or a report (args and expectations)."""
    return {_key(v) for v in extra if _nontrivial(v)} | _suite_literals(tuple(test_sources))


#: :func:`_test_literals` of whole suites too large for the parse caches (a real
#: project's tests: every completion of its tasks scans the same files), by content.
_SUITES: OrderedDict[str, frozenset[str]] = OrderedDict()
_SUITES_LOCK = threading.Lock()
_SUITES_MAX = 64


def _suite_literals(test_sources: tuple[str, ...]) -> set[str]:
    if bounded.cache_enabled(*test_sources) or not bounded.cache_enabled():
        return _test_literals(test_sources)  # memoised there, or caches are off
    digest = hashlib.sha256()
    for source in test_sources:
        digest.update(source.encode("utf-8", "surrogatepass") + b"\0")
    key = digest.hexdigest()
    with _SUITES_LOCK:
        found = _SUITES.get(key)
        if found is not None:
            _SUITES.move_to_end(key)
    if found is None:
        found = frozenset(_test_literals(test_sources))
        with _SUITES_LOCK:
            _SUITES[key] = found
            while len(_SUITES) > _SUITES_MAX:
                _SUITES.popitem(last=False)
    return set(found)


@bounded.memoised
def _test_literals(test_sources: tuple[str, ...]) -> set[str]:
    leaked: set[str] = set()
    for source in test_sources:
        tree = bounded.parse_or_none(source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)):
                value = _literal(node)
                if value is not _NOT_LITERAL and _nontrivial(value):
                    leaked.add(_key(value))
                    if isinstance(value, list):
                        leaked.add(_key(tuple(value)))
                    elif isinstance(value, tuple):
                        leaked.add(_key(list(value)))
    return leaked


@bounded.memoised
def _constants(source: str) -> set[str]:
    """Every literal value (constants and literal containers) of ``source``."""
    tree = bounded.parse_or_none(source)
    if tree is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)):
            value = _literal(node)
            if value is not _NOT_LITERAL:
                found.add(_key(value))
    return found


def _made_of(key: str, known: set[str]) -> bool:
    """Whether the container ``key`` (a repr) holds only values in ``known``: the patch
    rebuilt it from the file's own constants (``list({'a', 'b'})`` as ``['a', 'b']``,
    whose set literal never had the list's repr)."""
    try:
        value = ast.literal_eval(key)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    if not isinstance(value, (list, tuple, set, frozenset)) or not value:
        return False
    return all(_key(item) in known for item in value)


def scan_hardcoded_expectations(
    pristine: str,
    patched: str,
    path: str,
    test_sources: Sequence[str],
    report_values: Sequence[Any] = (),
    reference: str | None = None,
    *,
    known_constants: bool = False,
) -> list[HackFinding]:
    """Flag literals the patch *adds* to a comparison, a return or a lookup table when
    the same value appears in the visible tests or the bug report: special-casing the
    inputs the agent was shown instead of fixing the logic. Literals the (trusted)
    ``reference`` itself has are exempt: restoring a constant the bug changed is a fix.
    ``known_constants``: values the pristine file already holds anywhere (``list({'a',
    'b'})`` rewritten as ``['a', 'b']``) are exempt too (a repository has no reference;
    restructuring its own constants is not special-casing)."""
    leaked = _leaked_values(test_sources, report_values)
    reported = {_key(v) for v in report_values if not isinstance(v, bool) and v is not None}
    hits_set: set[str] = set()
    for collect, seen in ((_literals_in, leaked), (_parameter_guards, leaked | reported)):
        patched_literals = collect(patched)
        added = patched_literals - collect(pristine)
        if reference is not None:
            beyond_reference = patched_literals - collect(reference)
            added = Counter({k: n for k, n in added.items() if k in beyond_reference})
        hits_set.update(k for k in added if k in seen)
    if known_constants:
        known = _constants(pristine)
        hits_set = {k for k in hits_set if k not in known and not _made_of(k, known)}
    hits = sorted(hits_set)
    if not hits:
        return []
    detail = "patch special-cases values from the tests/report: " + ", ".join(hits[:3])[:300]
    return [HackFinding(kind="hardcoded_expectation", path=path, line=0, detail=detail)]
