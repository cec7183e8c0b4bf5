"""Static analysis of a set of files: the public API (libcst), AST sizes, cyclomatic
complexity, duplicated blocks and forwarding tricks.

Everything here reads model-written text in the trusted parent, so every parser is
bounded: a file that is too large or too deep is "cannot verify" (``None``), never an
exception or a hang.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from forgegym.rewards import bounded

__all__ = [
    "MAX_SOURCE_CHARS",
    "ApiEntry",
    "api_surface",
    "ast_size",
    "clone_counts",
    "complexity",
    "forwarding_tricks",
    "function_defs",
    "module_file",
    "parse",
    "signature",
]

MAX_SOURCE_CHARS = 200_000
_MAX_RESOLVE_DEPTH = 8


def parse(source: str) -> ast.Module | None:
    """``ast.parse`` within the parent's limits (:mod:`forgegym.rewards.bounded`);
    ``None`` when it cannot be read or is over a limit."""
    try:
        return bounded.parse(source)
    except (bounded.Unverifiable, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


#: libcst trees by source text (libcst nodes are immutable: sharing one is safe). A
#: submission's API is read several times (the hidden steps' targets, the public API)
#: and a task's original and starting files by every completion of a group.
_CST_CACHE = bounded.LRUCache(128)
#: :func:`api_surface` results by (files, module).
_SURFACE_CACHE = bounded.LRUCache(bounded.PARSE_CACHE_SIZE)


def _cst(source: str) -> cst.Module | None:
    """``libcst`` tree of ``source`` within the parent's limits, ``None`` when it cannot
    be read (cached by text, unless :func:`forgegym.rewards.bounded.uncached`)."""
    if not bounded.cache_enabled(source):
        return _cst_uncached(source)
    hit, tree = _CST_CACHE.get(source)
    if not hit:
        tree = _cst_uncached(source)
        _CST_CACHE.put(source, tree)
    return tree  # type: ignore[no-any-return]


def _cst_uncached(source: str) -> cst.Module | None:
    if bounded.source_problem(source) is not None or parse(source) is None:
        return None
    try:
        return cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        return None


# --------------------------------------------------------------------- the API
_EMPTY = cst.Module(body=[])


def signature(params: cst.Parameters) -> str:
    """Parameter names, kinds and defaults (annotations ignored): ``(a, b=2, *, c)``."""
    parts: list[str] = []

    def one(param: cst.Param, prefix: str = "") -> str:
        text = prefix + param.name.value
        if param.default is not None:
            text += "=" + _normal(_EMPTY.code_for_node(param.default))
        return text

    parts.extend(one(p) for p in params.posonly_params)
    if params.posonly_params:
        parts.append("/")
    parts.extend(one(p) for p in params.params)
    if isinstance(params.star_arg, cst.Param):
        parts.append(one(params.star_arg, "*"))
    elif params.kwonly_params:
        parts.append("*")
    parts.extend(one(p) for p in params.kwonly_params)
    if params.star_kwarg is not None:
        parts.append(one(params.star_kwarg, "**"))
    return "(" + ", ".join(parts) + ")"


def _normal(code: str) -> str:
    """An expression in canonical form (quotes, spacing), so ``"..."`` equals ``'...'``."""
    if len(code) > 2000:
        return code
    try:
        return ast.unparse(bounded.ast_parse(code.strip(), mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code


@dataclass(frozen=True)
class ApiEntry:
    """What a public name at an import path is: ``function`` with a signature,
    ``class`` (with its public methods' signatures) or ``value``."""

    kind: str
    signature: str = ""

    def to_json(self) -> list[str]:
        return [self.kind, self.signature]


def module_file(files: Mapping[str, str], module: str) -> str | None:
    """The file Python imports for ``module`` from the root: a package wins over a
    same-named module, as the path finder decides."""
    base = module.replace(".", "/")
    for candidate in (f"{base}/__init__.py", f"{base}.py"):
        if candidate in files:
            return candidate
    return None


def _top_statements(body: Sequence[Any]) -> Iterator[cst.CSTNode]:
    """Top-level statements, descending into ``if``/``try`` blocks (conditional defs)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        elif isinstance(stmt, cst.If):
            yield from _top_statements(stmt.body.body)
            if stmt.orelse is not None:
                yield from _top_statements(stmt.orelse.body.body)
        elif isinstance(stmt, cst.Try):
            yield from _top_statements(stmt.body.body)
            for handler in stmt.handlers:
                yield from _top_statements(handler.body.body)
        else:
            yield stmt


def _dotted(node: cst.BaseExpression | None) -> str:
    if node is None:
        return ""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return _dotted(node.value) + "." + node.attr.value
    return ""


def _absolute(module: str, is_package: bool, relative: int, name: str) -> str:
    if not relative:
        return name
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if relative > 1:
        parts = parts[: len(parts) - (relative - 1)]
    return ".".join([*parts, name] if name else parts)


def _class_entry(node: cst.ClassDef) -> ApiEntry:
    methods = []
    for stmt in node.body.body:
        if isinstance(stmt, cst.FunctionDef) and not stmt.name.value.startswith("_"):
            methods.append(stmt.name.value + signature(stmt.params))
        elif isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
            methods.append("__init__" + signature(stmt.params))
    return ApiEntry("class", "; ".join(sorted(methods)))


def _definitions(
    files: Mapping[str, str], module: str, depth: int, cache: dict[str, dict[str, ApiEntry]]
) -> dict[str, ApiEntry] | None:
    if module in cache:
        return cache[module]
    path = module_file(files, module)
    if path is None or depth > _MAX_RESOLVE_DEPTH:
        return None
    tree = _cst(files[path])
    if tree is None:
        return None
    cache[module] = {}  # cycles resolve to "nothing more"
    is_package = path.endswith("__init__.py")
    names: dict[str, ApiEntry] = {}
    for stmt in _top_statements(tree.body):
        if isinstance(stmt, cst.FunctionDef):
            names[stmt.name.value] = ApiEntry("function", signature(stmt.params))
        elif isinstance(stmt, cst.ClassDef):
            names[stmt.name.value] = _class_entry(stmt)
        elif isinstance(stmt, (cst.Assign, cst.AnnAssign)):
            targets = (
                [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
            )
            value = stmt.value
            for target in targets:
                if isinstance(target, cst.Name):
                    aliased = _dotted(value) if value is not None else ""
                    names[target.value] = names.get(aliased, ApiEntry("value"))
        elif isinstance(stmt, cst.ImportFrom):
            source = _absolute(
                module, is_package, len(stmt.relative), _dotted(stmt.module) if stmt.module else ""
            )
            if isinstance(stmt.names, cst.ImportStar):
                starred = _definitions(files, source, depth + 1, cache) or {}
                names.update({k: v for k, v in starred.items() if not k.startswith("_")})
                continue
            inner = _definitions(files, source, depth + 1, cache)
            for alias in stmt.names:
                imported = _dotted(alias.name)
                bound = alias.asname.name.value if alias.asname else imported  # type: ignore[union-attr]
                if inner is not None and imported in inner:
                    names[bound] = inner[imported]
                elif module_file(files, f"{source}.{imported}") is not None:
                    names[bound] = ApiEntry("module")
                else:
                    names[bound] = ApiEntry("value")
        elif isinstance(stmt, cst.Import):
            for alias in stmt.names:
                bound = (
                    alias.asname.name.value  # type: ignore[union-attr]
                    if alias.asname
                    else _dotted(alias.name).split(".")[0]
                )
                names[bound] = ApiEntry("module")
    cache[module] = names
    return names


def api_surface(files: Mapping[str, str], module: str) -> dict[str, ApiEntry] | None:
    """Public names importable as ``from module import name``, resolved through the
    files' own ``from x import y`` re-exports (absolute and relative, star included).
    ``None`` when ``module`` does not exist or cannot be parsed (cached by the files'
    contents and ``module``, unless :func:`forgegym.rewards.bounded.uncached`)."""
    texts = [text for text in files.values() if isinstance(text, str)]
    if len(texts) != len(files) or not bounded.cache_enabled(*texts):
        return _api_surface(files, module)
    key = (tuple(sorted(files.items())), module)
    hit, surface = _SURFACE_CACHE.get(key)
    if not hit:
        surface = _api_surface(files, module)
        _SURFACE_CACHE.put(key, surface)
    return None if surface is None else dict(surface)  # entries are frozen


def _api_surface(files: Mapping[str, str], module: str) -> dict[str, ApiEntry] | None:
    names = _definitions(files, module, 0, {})
    if names is None:
        return None
    return {k: v for k, v in names.items() if not k.startswith("_")}


# ------------------------------------------------------------- measurements
def function_defs(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions and methods (``Class.method``) by qualified name."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{item.name}"] = item
    return out


def ast_size(node: ast.AST) -> int:
    """Number of AST nodes below ``node``, docstrings excluded (what elided code shrinks)."""
    size = 0
    for child in ast.walk(node):
        if (
            isinstance(child, ast.Expr)
            and isinstance(child.value, ast.Constant)
            and isinstance(child.value.value, str)
        ):
            size -= 2
            continue
        size += 1
    return max(size, 0)


_DECISIONS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp, ast.Assert)


def complexity(func: ast.AST) -> int:
    """McCabe cyclomatic complexity of one function (nested functions excluded):
    1 + branches + boolean operands beyond the first + comprehension filters."""
    count = 1
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, _DECISIONS):
            count += 1
        elif isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        elif isinstance(node, ast.match_case):
            count += 1
        stack.extend(ast.iter_child_nodes(node))
    return count


def _block_key(statements: list[ast.stmt]) -> str:
    return hashlib.sha1(
        "\n".join(ast.dump(s, annotate_fields=False) for s in statements).encode()
    ).hexdigest()[:16]


def clone_counts(tree: ast.Module, window: int) -> Counter[str]:
    """How often each run of ``window`` consecutive statements (exact AST, names
    included) occurs across the functions of ``tree``."""
    counts: Counter[str] = Counter()
    for func in function_defs(tree).values():
        stack: list[list[ast.stmt]] = [func.body]
        while stack:
            body = stack.pop()
            for start in range(len(body) - window + 1):
                counts[_block_key(body[start : start + window])] += 1
            for stmt in body:
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        stack.append(inner)
    return counts


_FORWARDING_CALLS = {
    "exec": "exec",
    "eval": "eval",
    "compile": "compile",
    "__import__": "__import__",
    "globals": "globals()",
    "open": "open",
    "reload": "importlib.reload",
    "import_module": "importlib.import_module",
    "spec_from_file_location": "importlib.util.spec_from_file_location",
    "run_path": "runpy",
    "run_module": "runpy",
    "exec_module": "exec_module",
    "setattr": "setattr",
}
_FORWARDING_MODULES = {"importlib", "runpy", "imp", "types", "inspect"}


def forwarding_tricks(source: str, allow_star: bool = False) -> list[str]:
    """Ways a module can serve the old API without holding the code: executing or
    loading source at import time, module ``__getattr__``, writing ``sys.modules``,
    ``globals()`` updates, star re-exports (unless ``allow_star``). ``["unparseable"]``
    when the file cannot be read. Cached by text (a task's pristine sources are the
    baseline of every completion)."""
    return _forwarding_tricks(source, bool(allow_star))


@bounded.memoised
def _forwarding_tricks(source: str, allow_star: bool) -> list[str]:
    tree = parse(source)
    if tree is None:
        return ["unparseable"]
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in _FORWARDING_CALLS:
                found.append(_FORWARDING_CALLS[name])
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.module.split(".")[0] in _FORWARDING_MODULES:
                found.append(f"from {node.module} import")
            if not allow_star and any(alias.name == "*" for alias in node.names):
                found.append("star import")
        elif isinstance(node, ast.Import):
            found.extend(
                f"import {a.name}"
                for a in node.names
                if a.name.split(".")[0] in _FORWARDING_MODULES
            )
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("modules", "__dict__", "__code__")
            and (
                node.attr != "modules"
                or (isinstance(node.value, ast.Name) and node.value.id == "sys")
            )
        ):
            found.append(f".{node.attr}")
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
            "__getattr__",
            "__dir__",
        ):
            found.append(f"module {node.name}")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("__getattr__", "__class__"):
                    found.append(f"module {target.id}")
    return sorted(set(found))
