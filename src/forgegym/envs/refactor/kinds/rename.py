"""Rename public functions and keep the old names as deprecated aliases.

The new name gets the code (moved, not copied); the old name stays importable as a thin
wrapper that emits ``DeprecationWarning`` and delegates. Calls inside the module (and,
at the hardest level, in a consumer module) move to the new name, so only outside
callers of the old name see the warning -- the hidden checks record warnings per call.
"""

from __future__ import annotations

import ast
import functools
import random
from collections.abc import Iterator

import libcst as cst

from forgegym.envs.refactor.corpus import CorpusModule, load_corpus
from forgegym.envs.refactor.kinds.common import Draft, built, rename_names, test_ids
from forgegym.envs.refactor.spec import RefactorSpec, step

__all__ = ["build", "build_all", "build_for", "drafts", "new_name"]

KIND = "rename_alias"
_VERBS = {
    "parse": "read",
    "format": "render",
    "split": "divide",
    "apply": "use",
    "is": "check",
    "to": "as",
    "find": "locate",
    "count": "tally",
    "merge": "combine",
    "make": "build",
    "get": "fetch",
    "compute": "calculate",
    "group": "bucket",
    "flatten": "unnest",
}


def new_name(old: str, taken: set[str]) -> str:
    """A plausible new name: the leading verb swapped for a synonym, else a suffix."""
    head, _, rest = old.partition("_")
    if head in _VERBS:
        candidate = f"{_VERBS[head]}_{rest}" if rest else _VERBS[head]
    else:
        candidate = f"{old}_value" if not rest else f"compute_{old}"
    while candidate in taken:
        candidate += "_v2"
    return candidate


def _wrapper(func: ast.FunctionDef, old: str, new: str, source: str) -> str:
    args = func.args
    node = next(
        n
        for n in cst.parse_module(source).body
        if isinstance(n, cst.FunctionDef) and n.name.value == old
    )
    params = cst.Module(body=[]).code_for_node(node.params)
    forwards = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg:
        forwards.append(f"*{args.vararg.arg}")
    forwards += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg:
        forwards.append(f"**{args.kwarg.arg}")
    return (
        f"def {old}({params}):\n"
        f'    """Deprecated alias of :func:`{new}`."""\n'
        f"    warnings.warn(\n"
        f'        "{old} is deprecated; use {new}", DeprecationWarning, stacklevel=2\n'
        f"    )\n"
        f"    return {new}({', '.join(forwards)})\n"
    )


def reference_source(source: str, mapping: dict[str, str]) -> str:
    """The module with ``mapping``'s functions renamed, internal calls updated and a
    deprecated alias after each renamed function."""
    renamed = rename_names(source, mapping)
    tree = ast.parse(source)
    lines = renamed.splitlines(keepends=True)
    originals = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    # Insert aliases bottom-up so line numbers stay valid (renaming keeps line counts).
    for old in sorted(mapping, key=lambda o: -(originals[o].end_lineno or 0)):
        end = originals[old].end_lineno or 0
        lines[end:end] = ["\n", "\n", _wrapper(originals[old], old, mapping[old], source)]
    text = "".join(lines)
    # ``import warnings`` after the docstring and any leading imports.
    tree = ast.parse(text)
    insert_at = 0
    for node in tree.body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ) or isinstance(node, (ast.Import, ast.ImportFrom)):
            insert_at = node.end_lineno or 0
        else:
            break
    out = text.splitlines(keepends=True)
    has_imports = any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body)
    block = ["import warnings\n"] if has_imports else ["\n", "import warnings\n"]
    out[insert_at:insert_at] = block
    return "".join(out)


def _consumer(module: CorpusModule, functions: list[str]) -> str:
    lines = [
        f'"""Reports built on {module.name}."""\n',
        "\n",
        f"from {module.name} import {', '.join(functions)}\n",
    ]
    for fn in functions:
        lines += ["\n", "\n", f"def use_{fn}(*args):\n", f"    return {fn}(*args)\n"]
    return "".join(lines)


def build(module: CorpusModule, level: int, variant: str, olds: list[str]) -> RefactorSpec:
    name = module.name
    taken = set(module.functions)
    mapping: dict[str, str] = {}
    for old in olds:
        mapping[old] = new_name(old, taken | set(mapping.values()))
    files = {module.module_path: module.source, module.test_path: module.test_source}
    editable = [module.module_path]
    reference = {module.module_path: reference_source(module.source, mapping)}
    steps = []
    for fn, args in module.calls():
        if fn in mapping:
            steps.append(step(f"{name}:{mapping[fn]}", f"{name}:{fn}", args, new=True))
            steps.append(step(f"{name}:{fn}", f"{name}:{fn}", args, ("DeprecationWarning",)))
        else:
            steps.append(step(f"{name}:{fn}", f"{name}:{fn}", args))
    structure: list[dict[str, object]] = []
    for old, new in mapping.items():
        structure.append({"req": "defines", "path": module.module_path, "names": [new]})
        structure.append(
            {"req": "deprecated_alias", "path": module.module_path, "old": old, "new": new}
        )
    api = [
        {"module": name, "name": fn, "kind": "function", "alias": fn in mapping}
        for fn in module.functions
    ] + [
        {"module": name, "name": new, "kind": "function", "like": old, "new": True}
        for old, new in mapping.items()
    ]
    renames = ", ".join(f"`{old}` -> `{new}`" for old, new in mapping.items())
    description = (
        f"Rename in `{module.module_path}`: {renames}. The new name gets the "
        "implementation (move it, do not copy it). Keep each old name importable as a "
        "thin deprecated alias with the same parameters that emits a "
        "`DeprecationWarning` (with `warnings.warn`) and delegates to the new function. "
        "Code in this task that calls an old name must call the new one (no warnings "
        "from internal calls). Behaviour must not change; hidden checks compare old and "
        "new code on many inputs and record warnings."
    )
    if level >= 3:
        users = [f for f in module.functions if f in mapping] + [
            f for f in module.functions if f not in mapping
        ][:1]
        files["report.py"] = _consumer(module, users)
        editable.append("report.py")
        reference["report.py"] = rename_names(
            files["report.py"], {o: n for o, n in mapping.items() if o in users}
        )
        for fn, args in module.calls():
            if fn in users:
                steps.append(step(f"report:use_{fn}", f"{name}:{fn}", args))
        structure += [
            {"req": "imports_from", "path": "report.py", "names": {mapping[o]: name}}
            for o in users
            if o in mapping
        ]
        description += "\n\n`report.py` calls the old names; move it to the new ones."
    return RefactorSpec(
        kind=KIND,
        module=name,
        variant=variant,
        level=level,
        title=f"Rename {', '.join(mapping)} in {module.module_path} with deprecated aliases",
        description=description,
        files=files,
        editable=tuple(editable),
        visible_tests=(module.test_path,),
        visible_test_ids=test_ids(module.test_path, module.test_source),
        reference=reference,
        checks=[steps],
        api=api,
        structure=structure,
        integrity={
            "moved": {new: module.module_path for new in mapping.values()},
            "moved_from": {new: old for old, new in mapping.items()},
            "aliases": dict(mapping),
            "allow_star": False,
            "max_new_functions": len(mapping),
        },
        original={module.module_path: module.source},
        oracle_factory=lambda: [[{"t": f"{name}:{fn}", "a": a} for fn, a in module.oracle_calls()]],
        focus=(name, *mapping, *mapping.values()),
    )


def drafts(level: int, module: str | None = None) -> Iterator[Draft]:
    """The specs :func:`build_all` makes (of corpus module ``module`` only, if given),
    not built yet: the names to rename are drawn (cheap), ``make`` builds."""
    corpus = load_corpus()
    for name in corpus if module is None else [module] if module in corpus else []:
        yield from _module_drafts(corpus[name], level)


def _module_drafts(module: CorpusModule, level: int) -> Iterator[Draft]:
    functions = list(module.functions)
    rng = random.Random(f"{KIND}:{module.name}:{level}")
    count = {1: 1, 2: 2, 3: 1}[level]
    if len(functions) < count:
        return
    seen: set[tuple[str, ...]] = set()
    for attempt in range(6):
        olds = tuple(sorted(rng.sample(functions, count)))
        if olds in seen:
            continue
        seen.add(olds)
        variant = f"d{level}v{attempt}"
        yield module.name, variant, functools.partial(build, module, level, variant, list(olds))
        if len(seen) >= 2:
            break


def build_for(name: str, level: int) -> list[RefactorSpec]:
    """The specs of one corpus module at one level (deterministic)."""
    return built(_module_drafts(load_corpus()[name], level))


def build_all(level: int) -> list[RefactorSpec]:
    return built(drafts(level))
