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

from forgegym.rewards.antihack import HackFinding

__all__ = ["ALLOWED_IMPORTS", "MAX_SOURCE_CHARS", "scan_candidate"]

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
MAX_SOURCE_CHARS = 100_000
_MAX_NODES = 50_000


def _finding(kind: str, path: str, node: ast.AST | None, detail: str) -> HackFinding:
    return HackFinding(kind=kind, path=path, line=getattr(node, "lineno", 0), detail=detail)


def scan_candidate(source: str, path: str) -> list[HackFinding]:
    """Findings in a candidate module (empty when it only uses what the task allows)."""
    if len(source) > MAX_SOURCE_CHARS:
        return [_finding("cannot_verify", path, None, f"source over {MAX_SOURCE_CHARS} chars")]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []  # the compile gate reports it
    findings: list[HackFinding] = []
    for count, node in enumerate(ast.walk(tree)):
        if count > _MAX_NODES:
            return [_finding("cannot_verify", path, None, "source too large to verify")]
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in _FORBIDDEN_ATTRS:
                findings.append(
                    _finding("forbidden_attribute", path, node, f"names {node.value!r}")
                )
    return findings
