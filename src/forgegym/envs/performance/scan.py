"""Static scan of a candidate data structure (trusted parent; nothing is executed).

The measured code must do its work in plain Python on the standard containers, inside
the measured child. The scan flags what could move work or state out of the measurement
or read what the child must not use: imports outside a small allow-list (``os``,
``subprocess``, ``multiprocessing``, ``time``, ``resource``, ``ctypes``, ``importlib``,
``forgegym``, ...), the dynamic-code and introspection builtins (``open``, ``exec``,
``eval``, ``__import__``, ``getattr``, ``globals``, ...), and the dunder / frame
attributes of sandbox escapes (``__subclasses__``, ``__globals__``, ``f_back``, ...).
The runtime does not rely on the scan: CPU of every thread and process is counted, each
run is a fresh child with a fresh seed, and every measured run is checked for
correctness. Over-size or over-deep sources read as "cannot verify" and are flagged.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from forgegym.core.task import Task
from forgegym.rewards import bounded
from forgegym.rewards.antihack import HackFinding, scan_source, unverifiable

__all__ = ["ALLOWED_IMPORTS", "scan_candidate", "scan_submission"]

ALLOWED_IMPORTS = frozenset(
    {
        "__future__",
        "abc",
        "array",
        "bisect",
        "collections",
        "collections.abc",
        "dataclasses",
        "enum",
        "functools",
        "heapq",
        "itertools",
        "math",
        "numbers",
        "operator",
        "threading",
        "typing",
    }
)
_FORBIDDEN_NAMES = frozenset(
    {
        "__builtins__",
        "__import__",
        "breakpoint",
        "compile",
        "delattr",
        "dir",
        "eval",
        "exec",
        "exit",
        "getattr",
        "globals",
        "help",
        "input",
        "locals",
        "memoryview",
        "open",
        "quit",
        "setattr",
        "vars",
    }
)
_FORBIDDEN_ATTRS = frozenset(
    {
        "__base__",
        "__bases__",
        "__builtins__",
        "__class__",
        "__closure__",
        "__code__",
        "__dict__",
        "__getattribute__",
        "__globals__",
        "__import__",
        "__loader__",
        "__mro__",
        "__spec__",
        "__subclasses__",
        "ag_frame",
        "cr_frame",
        "f_back",
        "f_builtins",
        "f_globals",
        "f_locals",
        "gi_frame",
        "tb_frame",
        "tb_next",
    }
)


def _finding(kind: str, path: str, node: ast.AST | None, detail: str) -> HackFinding:
    return HackFinding(kind=kind, path=path, line=getattr(node, "lineno", 0), detail=detail)


def scan_candidate(source: str, path: str) -> list[HackFinding]:
    """Findings in a candidate module (empty when it only uses what the task allows);
    over the parent's limits (:mod:`forgegym.rewards.bounded`) one ``unverifiable``."""
    try:
        tree = bounded.parse(source, path)
    except bounded.Unverifiable as exc:
        return [unverifiable(path, str(exc))]
    if tree is None:
        return []  # a syntax error: the compile gate reports it
    findings: list[HackFinding] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED_IMPORTS:
                    findings.append(
                        _finding("forbidden_import", path, node, f"import {alias.name}")
                    )
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.level or module not in ALLOWED_IMPORTS:
                findings.append(_finding("forbidden_import", path, node, f"from {module} import"))
        elif isinstance(node, ast.Name) and node.id in _FORBIDDEN_NAMES:
            findings.append(_finding("forbidden_name", path, node, f"uses {node.id}"))
        elif isinstance(node, ast.Attribute) and node.attr in _FORBIDDEN_ATTRS:
            findings.append(_finding("forbidden_attribute", path, node, f"uses .{node.attr}"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in _FORBIDDEN_ATTRS
        ):
            findings.append(_finding("forbidden_attribute", path, node, f"names {node.value!r}"))
    return findings


def scan_submission(task: Task, files: Mapping[str, str]) -> list[HackFinding]:
    """Every anti-hack finding of a submission's editable files: the shared source scans
    (exit calls, framework monkeypatching, always-equal classes) on what the patch
    added, plus :func:`scan_candidate` on the whole module (what runs is what counts)."""
    changed = {p: c for p, c in files.items() if c != task.files.get(p)}
    problem = bounded.files_problem(changed)
    if problem is not None:
        path, _, reason = problem.partition(": ")
        return [unverifiable(path, reason)]
    findings: list[HackFinding] = []
    for path in task.editable_files:
        if path not in files:
            continue
        findings += scan_candidate(files[path], path)
        if path in changed:
            findings += scan_source(files[path], path, task.files.get(path))
    return findings
