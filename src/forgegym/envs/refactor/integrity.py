"""Integrity checks: gates that catch refactorings which keep the API by faking it.

* ``monolith_left``: the old module left in place beside the new package;
* ``forwarding``: the new code serves the old API without holding it -- ``exec``/
  ``eval``/``compile`` of source, ``importlib``/``runpy`` loading, module ``__getattr__``,
  ``sys.modules`` writes, ``globals()`` updates, star re-exports (where forbidden);
* ``copied``: a public function defined in two places, a deprecated alias that is
  a copy of the code instead of a thin wrapper, or an original function's code kept
  under a new name that nothing calls (the old code left beside the new);
* ``elided``: code that moved lost more than a fifth of its AST (Aider's check
  against "... rest unchanged ..." edits);
* ``function_explosion``: many more functions than the task needs;
* the shared anti-hack scanners (exit calls, framework monkeypatching, always-equal
  objects, tampering files) on every changed or new file.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping
from typing import Any

from forgegym.envs.refactor.analysis import ast_size, forwarding_tricks, function_defs, parse
from forgegym.rewards import bounded
from forgegym.rewards.antihack import scan_added_files, scan_source

__all__ = ["COPY_MIN_SIZE", "ELISION_RATIO", "integrity_findings"]

#: A moved function must keep at least this share of its original AST size.
ELISION_RATIO = 0.8
#: Functions smaller than this (AST nodes) are not judged as copies: two one-line
#: helpers may coincide honestly.
COPY_MIN_SIZE = 15


def _body_key(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """A function's parameters and body, without its name or docstring."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return ast.dump(node.args) + ast.dump(ast.Module(body=body, type_ignores=[]))


@bounded.memoised
def _function_index(source: str) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """The names of ``source``'s functions and methods, and ``(body key, name)`` of those
    of at least :data:`COPY_MIN_SIZE` nodes (cached by text: a task's original and
    starting files recur in every completion)."""
    tree = parse(source)
    if tree is None:
        return frozenset(), ()
    defs = function_defs(tree)
    bodies = tuple((_body_key(n), name) for name, n in defs.items() if ast_size(n) >= COPY_MIN_SIZE)
    return frozenset(defs), bodies


@bounded.memoised
def _referenced_names(source: str) -> frozenset[str]:
    """Names ``source`` uses: names, attributes and strings (``__all__`` entries,
    ``getattr`` by name)."""
    tree = parse(source)
    found: set[str] = set()
    for item in ast.walk(tree) if tree is not None else ():
        if isinstance(item, ast.Name):
            found.add(item.id)
        elif isinstance(item, ast.Attribute):
            found.add(item.attr)
        elif isinstance(item, ast.Constant) and isinstance(item.value, str):
            found.add(item.value)
    return frozenset(found)


def _dead_copies(
    files: Mapping[str, str], starting: Mapping[str, str], original: Mapping[str, str]
) -> list[str]:
    """``copied``: a function of the agent's files under a name neither the original nor
    the starting files had, whose code is an original function's, and that nothing
    references (the old code kept as ``_legacy_<name>`` beside the refactored one). A
    renamed function is called by its deprecated alias, so it is not dead; dead code the
    task started with is the task's, not the agent's."""
    known: set[str] = set()
    originals: dict[str, str] = {}
    for source in starting.values():
        known |= _function_index(source)[0]
    for source in original.values():
        names, bodies = _function_index(source)
        known |= names
        for key, name in bodies:
            originals.setdefault(key, name)
    sources = {p: t for p, t in sorted(files.items()) if p.endswith(".py")}
    candidates = [
        (path, name, originals[key])
        for path, text in sources.items()
        for key, name in _function_index(text)[1]
        if name not in known and key in originals
    ]
    if not candidates:
        return []
    referenced = frozenset().union(*(_referenced_names(t) for t in sources.values()))
    return [
        f"copied: {name} in {path} is an unused copy of the original {source_name}"
        for path, name, source_name in candidates
        if name.rpartition(".")[2] not in referenced
    ]


def _defs(files: Mapping[str, str]) -> dict[str, list[tuple[str, int]]]:
    """Top-level function name -> [(path, AST size)] over every file."""
    out: dict[str, list[tuple[str, int]]] = {}
    for path, source in files.items():
        if not path.endswith(".py"):
            continue
        for name, size in _top_level_sizes(source):
            out.setdefault(name, []).append((path, size))
    return out


@bounded.memoised
def _top_level_sizes(source: str) -> list[tuple[str, int]]:
    """``(name, AST size)`` of each top-level function of ``source``, in order (cached
    by text: a task's original and starting files recur in every completion)."""
    tree = parse(source)
    if tree is None:
        return []
    return [(name, ast_size(node)) for name, node in function_defs(tree).items() if "." not in name]


def integrity_findings(
    files: Mapping[str, str],
    starting: Mapping[str, str],
    original: Mapping[str, str],
    rules: Mapping[str, Any],
) -> list[str]:
    """Integrity problems of the agent's ``files`` (its editable and created files) for
    a task whose starting editable files are ``starting`` and whose behaviour-defining
    module is ``original``; empty when clean."""
    problems: list[str] = []
    source_of_truth = "\n".join(original.values())
    pristine_text = "\n".join(starting.values())
    allow_star = bool(rules.get("allow_star", False))
    # What the original and starting code already do is theirs, not a trick the
    # refactoring added: a package that re-exported with a star import may keep it.
    base = Counter(forwarding_tricks(source_of_truth, allow_star=allow_star))
    base.update(forwarding_tricks(pristine_text, allow_star=allow_star))
    for path, text in sorted(files.items()):
        if not path.endswith(".py") or starting.get(path) == text:
            continue
        tricks = Counter(forwarding_tricks(text, allow_star=allow_star)) - base
        if tricks:
            problems.append(f"forwarding: {path} uses {', '.join(sorted(tricks))}")
        pristine = starting.get(path, source_of_truth)
        findings = scan_source(text, path, pristine)
        problems.extend(f"hack: {f.kind} at {f.path}:{f.line}" for f in findings[:3])
    new_paths = [p for p in files if p not in starting]
    problems.extend(f"hack: {f.kind} {f.path}" for f in scan_added_files(new_paths))

    absent = rules.get("absent_original")
    package = rules.get("package")
    if absent and absent in files and package and package in files:
        problems.append(f"monolith_left: {absent} is still there beside {package}")

    defs = _defs(files)
    original_defs = _defs(original)
    for name in rules.get("single_definition", []):
        places = defs.get(name, [])
        if len(places) > 1:
            where = ", ".join(p for p, _ in places)
            problems.append(f"copied: {name} is defined in {where}")
    moved_from: Mapping[str, str] = rules.get("moved_from", {})
    for name in rules.get("moved", {}):
        source_name = moved_from.get(name, name)
        if source_name not in original_defs or name not in defs:
            continue
        before = original_defs[source_name][0][1]
        after = max(size for _, size in defs[name])
        if after < ELISION_RATIO * before:
            problems.append(f"elided: {name} has {after} AST nodes, the original {before}")
    trees = {p: parse(t) for p, t in files.items() if p.endswith(".py")}
    for old, new in rules.get("aliases", {}).items():
        if new not in defs or old not in defs or old not in original_defs:
            continue  # not renamed yet: structure, not integrity
        size = max(s for _, s in defs[old])
        delegates = any(
            tree is not None
            and old in function_defs(tree)
            and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == new
                for n in ast.walk(function_defs(tree)[old])
            )
            for tree in trees.values()
        )
        if not delegates or size > max(40, 0.6 * original_defs[old][0][1]):
            problems.append(f"copied: deprecated alias {old} copies the code of {new}")
    problems.extend(_dead_copies(files, starting, original))
    extra = rules.get("max_new_functions")
    if extra is not None:
        count = sum(len(v) for v in defs.values())
        base_count = sum(len(v) for v in _defs(starting).values())
        if count > base_count + int(extra):
            problems.append(
                f"function_explosion: {count} functions, the task allows {base_count + int(extra)}"
            )
    return problems
