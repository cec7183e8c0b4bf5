"""Bounds on everything the trusted parent reads from model text.

The parent never evaluates model text, and every parser and scanner over it runs
within limits on size, line count, AST depth and node count, and integer magnitude.
Over a limit means *cannot verify*: scanners report an ``unverifiable`` finding and
graders gate the reward (``unverifiable``, the hack total), never an exception or a
hang. With the source at most :data:`MAX_SOURCE_CHARS` and the tree at most
:data:`MAX_AST_NODES` nodes and :data:`MAX_AST_DEPTH` deep, parsing and every scan
are linear-time and the recursive helpers (``ast.unparse``, ``compile``, libcst)
stay far from the interpreter's recursion limit.

* :func:`source_problem` — why a source cannot be verified (size, lines, NUL bytes,
  lone surrogates), or ``None``;
* :func:`parse` — ``ast.parse`` within the limits: the tree, ``None`` for a syntax
  error, :class:`Unverifiable` over a limit;
* :func:`number` — the value of a numeric constant expression (``5``, ``60 * 5``,
  ``-1e-3``, ``2 ** 10``) computed without ``eval`` and with bounded magnitude.

Batch grading parses the same sources again and again (the pristine files and the
visible tests for every completion of a group, a patched file once per scanner), so
:func:`parse` keeps the last :data:`PARSE_CACHE_SIZE` results keyed by the exact text:
trees it returns are shared and must be treated as read-only. :func:`memoised` gives
scanners' pure functions of source text the same cache. :func:`uncached` turns both off
(the reference grading path runs without them).
"""

from __future__ import annotations

import ast
import copy
import functools
import math
import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = [
    "MAX_AST_DEPTH",
    "MAX_AST_NODES",
    "MAX_LINES",
    "MAX_NUMBER",
    "MAX_SOURCE_CHARS",
    "LRUCache",
    "Unverifiable",
    "cache_enabled",
    "check_tree",
    "files_problem",
    "memoised",
    "number",
    "parse",
    "parse_or_none",
    "source_problem",
    "uncached",
]

#: Longest source (characters) the parent parses or scans.
MAX_SOURCE_CHARS = 1_000_000
#: Most lines in one source.
MAX_LINES = 20_000
#: Deepest AST the parent walks (normal code stays under ~40).
MAX_AST_DEPTH = 150
#: Most AST nodes in one source.
MAX_AST_NODES = 300_000
#: Largest magnitude :func:`number` computes (beyond it: not a usable constant).
MAX_NUMBER = 1e15
_MAX_EXPONENT = 64.0
_MAX_NUMBER_DEPTH = 32


#: Parse results (and memoised scan results) kept, most recently used first.
PARSE_CACHE_SIZE = 256
#: Longer sources are never cached (their trees are large; they are rare).
_CACHE_MAX_CHARS = 200_000


class Unverifiable(Exception):
    """A source is over one of the limits; the message says which."""


_T = TypeVar("_T")
_cache_off = 0
_cache_lock = threading.Lock()


@contextmanager
def uncached() -> Iterator[None]:
    """Parse and scan without the caches while the block runs (any thread)."""
    global _cache_off
    with _cache_lock:
        _cache_off += 1
    try:
        yield
    finally:
        with _cache_lock:
            _cache_off -= 1


class LRUCache:
    """A small thread-safe LRU of results keyed by hashable arguments."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[Hashable, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[bool, Any]:
        with self.lock:
            if key in self.data:
                self.data.move_to_end(key)
                return True, self.data[key]
        return False, None

    def put(self, key: Hashable, value: Any) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)


def _cacheable(args: tuple[Any, ...]) -> bool:
    total = 0
    for arg in args:
        if isinstance(arg, str):
            total += len(arg)
        elif isinstance(arg, tuple):
            total += sum(len(a) for a in arg if isinstance(a, str))
    return _cache_off == 0 and total <= _CACHE_MAX_CHARS


def cache_enabled(*args: Any) -> bool:
    """Whether results for ``args`` (texts) may be cached now (see :func:`uncached`)."""
    return _cacheable(args)


def memoised(fn: Callable[..., _T]) -> Callable[..., _T]:
    """Cache a pure function of hashable arguments (source texts, tuples of them).
    Each call gets its own (deep) copy of the cached value, so callers may mutate it;
    with :func:`uncached` active the function simply runs."""
    cache = LRUCache(PARSE_CACHE_SIZE)

    @functools.wraps(fn)
    def wrapper(*args: Any) -> _T:
        if not _cacheable(args):
            return fn(*args)
        hit, value = cache.get(args)
        if not hit:
            value = fn(*args)
            cache.put(args, value)
        return copy.deepcopy(value)  # type: ignore[no-any-return]

    return wrapper


def source_problem(source: object) -> str | None:
    """Why ``source`` cannot be verified, or ``None`` when it is within the limits."""
    if not isinstance(source, str):
        return f"not text ({type(source).__name__})"
    if len(source) > MAX_SOURCE_CHARS:
        return f"{len(source)} characters (limit {MAX_SOURCE_CHARS})"
    lines = source.count("\n") + 1
    if lines > MAX_LINES:
        return f"{lines} lines (limit {MAX_LINES})"
    if "\x00" in source:
        return "contains NUL bytes"
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return "not valid UTF-8 (lone surrogates)"
    return None


def files_problem(files: Mapping[str, str]) -> str | None:
    """The first ``path: problem`` among ``files`` (``None`` if all are within limits)."""
    for path in sorted(files):
        problem = source_problem(files[path])
        if problem is not None:
            return f"{path}: {problem}"
    return None


#: CPython 3.11/3.12 keep the AST builder's recursion depth in interpreter-wide state,
#: so two threads parsing at once can fail with ``SystemError: AST constructor
#: recursion depth mismatch`` (python/cpython#106905). The server and batch grading
#: parse model text in several threads: every parse in the parent takes this lock.
_AST_LOCK = threading.Lock()


def ast_parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> Any:
    """``ast.parse`` that is safe to call from several threads at once. Code outside
    this lock may still parse at the same moment (pytest's rewriter compiling a warm
    project's tests in a background thread), so the state mismatch is retried."""
    with _AST_LOCK:
        for attempt in range(_AST_RETRIES):
            try:
                return ast.parse(source, filename=filename, mode=mode)
            except SystemError as exc:
                if "recursion depth mismatch" not in str(exc) or attempt == _AST_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")


_AST_RETRIES = 5


def parse(source: str | None, filename: str = "<source>") -> ast.Module | None:
    """``ast.parse(source)`` within the limits.

    Returns the tree, or ``None`` when the source is not valid Python. Raises
    :class:`Unverifiable` when it is over a limit (size, lines, depth, node count, or
    the parser itself running out of stack or memory). The tree may be shared with
    other callers (results are cached by text): never mutate it.
    """
    text = source or ""
    if not _cacheable((text,)):
        return _parse(text, filename)
    key = (text, filename)
    hit, value = _PARSED.get(key)
    if not hit:
        try:
            value = _parse(text, filename)
        except Unverifiable as exc:
            value = exc
        _PARSED.put(key, value)
    if isinstance(value, Unverifiable):
        raise Unverifiable(*value.args)
    return value  # type: ignore[no-any-return]


def parse_or_none(source: str | None, filename: str = "<source>") -> ast.Module | None:
    """:func:`parse` for callers that skip what they cannot read: ``None`` when the
    source is not valid Python *or* over a limit (never raises :class:`Unverifiable`;
    use :func:`parse` where being over a limit must gate)."""
    try:
        return parse(source, filename)
    except Unverifiable:
        return None


_PARSED = LRUCache(PARSE_CACHE_SIZE)


def _parse(text: str, filename: str) -> ast.Module | None:
    problem = source_problem(text)
    if problem is not None:
        if "NUL" in problem or "UTF-8" in problem:
            return None  # the interpreter refuses it too: a compile error, not a scan gap
        raise Unverifiable(f"{filename}: {problem}")
    try:
        tree = ast_parse(text, filename=filename)
    except (SyntaxError, ValueError):
        return None
    except (RecursionError, MemoryError) as exc:
        raise Unverifiable(
            f"{filename}: too deeply nested to parse ({type(exc).__name__})"
        ) from None
    except SystemError as exc:  # the cross-thread state mismatch, every retry lost
        raise Unverifiable(f"{filename}: the parser failed ({exc})") from None
    check_tree(tree, filename)
    return tree


def check_tree(tree: ast.AST, filename: str = "<source>") -> None:
    """Raise :class:`Unverifiable` if ``tree`` is deeper or larger than the limits
    (iterative: never recurses)."""
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if depth > MAX_AST_DEPTH:
            raise Unverifiable(f"{filename}: nested deeper than {MAX_AST_DEPTH} levels")
        if nodes > MAX_AST_NODES:
            raise Unverifiable(f"{filename}: more than {MAX_AST_NODES} syntax nodes")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


_BINOPS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def number(node: ast.AST | None, _depth: int = 0) -> float | None:
    """Value of a numeric constant expression, or ``None`` if ``node`` is not one or its
    value (or any intermediate) is beyond :data:`MAX_NUMBER`.

    Only number literals, unary ``+``/``-`` and ``+ - * / // % **`` are understood;
    exponents are limited to :data:`_MAX_EXPONENT`, so ``9 ** 9 ** 9`` or
    ``2 ** 2 ** 24`` is ``None`` at once, never computed.
    """
    if node is None or _depth > _MAX_NUMBER_DEPTH:
        return None
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if isinstance(value, int) and value.bit_length() > 64:
            return None
        result = float(value)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = number(node.operand, _depth + 1)
        if inner is None:
            return None
        result = -inner if isinstance(node.op, ast.USub) else inner
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left = number(node.left, _depth + 1)
        right = number(node.right, _depth + 1)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_EXPONENT:
            return None
        try:
            result = _BINOPS[type(node.op)](left, right)
        except (ArithmeticError, ValueError):
            return None
        if isinstance(result, complex):
            return None
    else:
        return None
    return result if math.isfinite(result) and abs(result) <= MAX_NUMBER else None
