"""Source manipulation shared by the kinds: top-level segments and their dependencies,
renaming with libcst, visible test ids."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst

from forgegym.envs.refactor.spec import RefactorSpec

__all__ = [
    "Builder",
    "Draft",
    "Segment",
    "built",
    "docstring",
    "rename_names",
    "segments",
    "test_ids",
]

Builder = Callable[[int], list[RefactorSpec]]
#: ``(module, variant, make)``: one spec a kind would build, not built yet.
Draft = tuple[str, str, Callable[[], RefactorSpec | None]]


def built(drafts: Iterator[Draft]) -> list[RefactorSpec]:
    """The specs of ``drafts`` (those whose ``make`` gives one)."""
    return [spec for _, _, make in drafts if (spec := make()) is not None]


@dataclass(frozen=True)
class Segment:
    """One top-level statement: its source, the names it binds and the top-level names
    it uses."""

    source: str
    binds: frozenset[str]
    uses: frozenset[str]
    kind: str  # "import", "function", "class", "assign", "docstring", "other"


def docstring(source: str) -> str | None:
    tree = ast.parse(source)
    return ast.get_docstring(tree, clean=False)


def segments(source: str) -> list[Segment]:
    """The module's top-level statements in order (decorators and comments kept)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    out: list[Segment] = []
    top_names: set[str] = set()
    for node in tree.body:
        for child in ast.walk(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)) and child in tree.body:
                top_names.add(child.name)
    for index, node in enumerate(tree.body):
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        end = node.end_lineno or node.lineno
        text = "".join(lines[start:end])
        binds: set[str] = set()
        kind = "other"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            kind = "import"
            binds = {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind, binds = "function", {node.name}
        elif isinstance(node, ast.ClassDef):
            kind, binds = "class", {node.name}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            kind = "assign"
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            binds = {t.id for t in targets if isinstance(t, ast.Name)}
        elif (
            index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            kind = "docstring"
        uses = {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        out.append(Segment(text, frozenset(binds), frozenset(uses - binds), kind))
    return out


class _Renamer(cst.CSTTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        if updated_node.value in self.mapping:
            return updated_node.with_changes(value=self.mapping[updated_node.value])
        return updated_node

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.Attribute:
        # ``obj.name`` attributes are not the module's names: keep them.
        if original_node.attr.value in self.mapping:
            return updated_node.with_changes(attr=original_node.attr)
        return updated_node

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        if original_node.keyword is not None:
            return updated_node.with_changes(keyword=original_node.keyword)
        return updated_node


def rename_names(source: str, mapping: dict[str, str]) -> str:
    """Rename every use of the module-level names in ``mapping`` (libcst)."""
    return cst.parse_module(source).visit(_Renamer(mapping)).code


def test_ids(test_path: str, test_source: str) -> tuple[str, ...]:
    tree = ast.parse(test_source)
    return tuple(
        f"{test_path}::{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    )
