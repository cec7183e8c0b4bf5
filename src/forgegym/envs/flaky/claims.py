"""Diagnosis claims checked against the code: a hallucinated reference costs.

A diagnosis names a ``location`` (``path::func``) and free-text ``claims``. What a claim
*refers to* is checkable without judging its prose: file paths (``pkg/mod.py``, with an
optional ``:line``), ``path::name`` locations and code symbols written as code
(```name```, ``name()``, ``a.b.c``). Each reference must exist in the task's files
(pristine or submitted): the file, a line within it, a name the code defines or uses.
Everything is parsed with the standard library's ``ast`` under the parent's bounds;
nothing is imported or run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from forgegym.rewards import bounded

__all__ = ["ClaimCheck", "check_diagnoses"]

_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.py)(?::(\d+))?(?:::([\w.]+))?")
_CODE = re.compile(r"`([^`\n]{1,120})`")
_CALL = re.compile(r"(?<![\w.`])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\(\)")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_MAX_REFS = 40


@dataclass
class ClaimCheck:
    """References found in a diagnosis and the ones that do not exist."""

    checked: int = 0
    missing: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Fraction of references that do not exist (0.0 with none)."""
        return len(self.missing) / self.checked if self.checked else 0.0


@dataclass
class _Index:
    lines: dict[str, int]
    names: set[str]
    defined: dict[str, set[str]]  # path -> qualified definitions (f, C, C.m)


def _index(files: Mapping[str, str]) -> _Index:
    lines: dict[str, int] = {}
    names: set[str] = set()
    defined: dict[str, set[str]] = {}
    for path, source in files.items():
        lines[path] = source.count("\n") + 1
        if not path.endswith(".py") or bounded.source_problem(source) is not None:
            continue
        tree = bounded.parse_or_none(source)
        if tree is None:
            continue
        here: set[str] = set()
        for top in tree.body:
            if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                here.add(top.name)
                if isinstance(top, ast.ClassDef):
                    for item in top.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                            here.add(f"{top.name}.{item.name}")
        defined[path] = here
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.update((node.asname or node.name).split("."))
                names.update(node.name.split("."))
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    return _Index(lines, names, defined)


def _resolve_path(path: str, index: _Index) -> str | None:
    if path in index.lines:
        return path
    matches = [p for p in index.lines if p.endswith("/" + path)]
    return matches[0] if len(matches) == 1 else None


def _check_location(location: str, index: _Index) -> str | None:
    """``None`` if ``path::func`` exists, else what is missing."""
    path, _, func = location.partition("::")
    path, func = path.strip(), func.strip()
    if not path:
        return None
    resolved = _resolve_path(path, index)
    if resolved is None:
        return f"file {path}"
    if func and func != "<module>":  # module level: Python's own name for it
        defs = index.defined.get(resolved, set())
        if func not in defs and not any(d.endswith("." + func) for d in defs):
            return f"{path}::{func}"
    return None


def _symbol_exists(symbol: str, index: _Index) -> bool:
    return all(part in index.names for part in symbol.split(".") if part)


def check_diagnoses(diagnoses: Iterable[object], files: Mapping[str, str]) -> ClaimCheck:
    """Check every reference in the ``location`` and ``claims`` of ``diagnoses``
    (objects with those attributes) against ``files``."""
    index = _index(files)
    result = ClaimCheck()
    seen: set[str] = set()

    def ref(key: str, problem: str | None) -> None:
        if key in seen or result.checked >= _MAX_REFS:
            return
        seen.add(key)
        result.checked += 1
        if problem is not None:
            result.missing.append(problem)

    for diagnosis in diagnoses:
        location = str(getattr(diagnosis, "location", "") or "")
        if location.strip():
            ref(f"loc:{location}", _check_location(location, index))
        for claim in list(getattr(diagnosis, "claims", []) or [])[:20]:
            text = str(claim)[:2000]
            for match in _PATH.finditer(text):
                path, line, func = match.group(1), match.group(2), match.group(3)
                resolved = _resolve_path(path, index)
                if resolved is None:
                    ref(f"path:{path}", f"file {path}")
                    continue
                if line is not None:
                    ok = 1 <= int(line) <= index.lines[resolved]
                    ref(f"line:{resolved}:{line}", None if ok else f"line {path}:{line}")
                if func:
                    ref(f"loc:{resolved}::{func}", _check_location(f"{resolved}::{func}", index))
            stripped = _PATH.sub(" ", text)
            symbols = [m.group(1).rstrip("()") for m in _CODE.finditer(stripped)]
            symbols += [m.group(1) for m in _CALL.finditer(_CODE.sub(" ", stripped))]
            for symbol in symbols:
                symbol = symbol.strip()
                if not _DOTTED.match(symbol):
                    continue  # an expression or prose in backticks: not a reference
                ref(f"sym:{symbol}", None if _symbol_exists(symbol, index) else f"symbol {symbol}")
    return result
