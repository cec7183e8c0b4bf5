"""The parsed view every anti-hack scanner reads, and the helpers they share.

:class:`ModuleIndex` parses a module once (bounded: :mod:`forgegym.rewards.bounded`)
with parent links, import aliases and enclosing-scope names; a scanner compares the
pristine index with the patched one and reports, as :class:`HackFinding`, what the
patch *added* (:func:`added` over multisets of :class:`Event` keys).
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from forgegym.rewards import bounded

__all__ = [
    "Event",
    "HackFinding",
    "ModuleIndex",
    "Scanner",
    "added",
    "dotted_name",
    "last_name",
    "number",
    "per_index",
    "snippet",
    "walk_local",
]


class HackFinding(BaseModel):
    """One suspicious construct a patch added."""

    model_config = ConfigDict(frozen=True)

    kind: str
    path: str
    line: int
    detail: str

    @property
    def where(self) -> str:
        """``path:line``, or ``path`` alone for a finding about a whole file (line 0)."""
        return f"{self.path}:{self.line}" if self.line > 0 else self.path

    def render(self) -> str:
        """``path:line: kind: detail`` (``path: kind: detail`` for a whole file)."""
        return f"{self.where}: {self.kind}: {self.detail}"


# --------------------------------------------------------------------------- indexing


@dataclass
class ModuleIndex:
    """A parsed module with parent links, import aliases and enclosing-scope names."""

    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    #: Results of :func:`per_index` functions of this index (it is read-only).
    memo: dict[Hashable, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, source: str | None) -> ModuleIndex | None:
        """Parse ``source`` (``None`` or empty → an empty module); ``None`` if it does not
        parse. Raises :class:`~forgegym.rewards.bounded.Unverifiable` when the source is
        over the parent's limits (size, lines, depth, nodes). Indexes are cached by
        text (see :func:`~forgegym.rewards.bounded.parse`) and shared: read-only."""
        tree = bounded.parse(source)
        if tree is None:
            return None
        text = source or ""
        if cls is not ModuleIndex or not bounded.cache_enabled(text):
            return cls._build(tree)
        hit, index = _INDEXES.get(text)
        if not hit:
            index = cls._build(tree)
            _INDEXES.put(text, index)
        return index  # type: ignore[no-any-return]

    @classmethod
    def _build(cls, tree: ast.Module) -> ModuleIndex:
        index = cls(tree)
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                index.parents[child] = node
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        index.aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    index.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return index

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """The enclosing nodes of ``node``, innermost first."""
        while node in self.parents:
            node = self.parents[node]
            yield node

    def scope(self, node: ast.AST) -> str:
        """Dotted names of the enclosing classes/functions (``""`` at module level)."""
        names = [
            a.name
            for a in self.ancestors(node)
            if isinstance(a, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ]
        return ".".join(reversed(names))

    def dotted(self, node: ast.AST) -> str | None:
        """Resolved dotted name of a ``Name``/``Attribute`` chain (or a call's callee)."""
        if isinstance(node, ast.Call):
            node = node.func
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call):  # e.g. threading.Event().wait
            inner = self.dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            return ".".join(reversed(parts))
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def functions(self) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        """Every function with its qualified name (``Class.method``)."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                scope = self.scope(node)
                yield (f"{scope}.{node.name}" if scope else node.name), node


_INDEXES = bounded.LRUCache(bounded.PARSE_CACHE_SIZE)

_E = TypeVar("_E")


def per_index(fn: Callable[..., list[_E]]) -> Callable[..., list[_E]]:
    """Remember a scanner's event function of ``(index, *args)`` on the index: a shared
    (cached) pristine index is scanned once, not once per patched file compared with
    it. Each call gets its own list; ``args`` are hashable or sets (keyed sorted)."""

    @functools.wraps(fn)
    def wrapper(index: ModuleIndex, *args: Any) -> list[_E]:
        key = (fn, tuple(tuple(sorted(a)) if isinstance(a, set | frozenset) else a for a in args))
        events = index.memo.get(key)
        if events is None:
            events = fn(index, *args)
            index.memo[key] = events
        return list(events)

    return wrapper


@dataclass(frozen=True)
class Event:
    """A construct found in one module: ``key`` identifies it across versions."""

    key: tuple[object, ...]
    line: int
    detail: str


def added(
    pristine: Iterable[Event], patched: Iterable[Event], kind: str, path: str
) -> list[HackFinding]:
    """Events of ``patched`` beyond the multiset of ``pristine`` keys."""
    remaining = Counter(e.key for e in pristine)
    findings = []
    for event in patched:
        if remaining[event.key] > 0:
            remaining[event.key] -= 1
        else:
            findings.append(HackFinding(kind=kind, path=path, line=event.line, detail=event.detail))
    return findings


def walk_local(node: ast.AST) -> Iterator[ast.AST]:
    """Like :func:`ast.walk` but not into nested function or class definitions."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
        ):
            stack.extend(ast.iter_child_nodes(child))


def number(node: ast.AST | None) -> float | None:
    """Value of a numeric constant expression such as ``5``, ``-1``, ``60 * 5``, ``1e-3``
    (bounded: see :func:`forgegym.rewards.bounded.number`)."""
    return bounded.number(node)


def snippet(node: ast.AST) -> str:
    """``node`` as source, cut to 80 characters (for finding details)."""
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."


def dotted_name(node: ast.AST) -> str | None:
    """The dotted name of a ``Name``/``Attribute`` chain as written (``a.b.c``; no alias
    resolution, unlike :meth:`ModuleIndex.dotted`), or ``None`` for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def last_name(name: str | None) -> str:
    """The last component of a dotted name (``""`` for ``None``)."""
    return (name or "").rsplit(".", 1)[-1]


Scanner = Callable[[ModuleIndex, ModuleIndex, str], list["HackFinding"]]
"""A scanner: ``(pristine, patched, path) -> findings``."""
