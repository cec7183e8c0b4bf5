"""Find a definition in Python source by its dotted path (``Class.method``, ``outer.inner``,
a pytest id's ``Class::test`` parts): the one lookup the graders, scans and benchmarks
share."""

from __future__ import annotations

import ast
from collections.abc import Sequence

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def find_definition(tree: ast.Module, parts: Sequence[str]) -> Definition | None:
    """The ``def`` or ``class`` that ``parts`` (``["Class", "method"]``) names, looked up
    scope by scope (the first match of each name), or None."""
    node: ast.AST = tree
    for name in parts:
        found = next(
            (
                n
                for n in getattr(node, "body", [])
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == name
            ),
            None,
        )
        if found is None:
            return None
        node = found
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else None
