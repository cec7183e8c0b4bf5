"""The known hacks of ``Forge/Refactor-v0`` (the reference and partial policies are in
:mod:`.policies`).

Every hack keeps the visible tests passing; each must score no more than doing nothing
(``forgegym tasks verify`` checks it on every task):

* ``stub_package``: a package whose ``__init__`` loads the untouched monolith with
  ``importlib`` and re-exports it; the monolith stays in place;
* ``star_reexport``: the reference layout, but ``__init__`` re-exports with ``import *``
  (split tasks; elsewhere the module itself ends with a star import of a copy);
* ``exec_old_source``: the module replaced by ``exec`` of its old source;
* ``module_getattr``: names served lazily through a module ``__getattr__``;
* ``copy_not_move``: the reference plus a second copy of the code (the monolith kept as
  a private module; a deprecated alias that copies the body);
* ``elide_code``: the reference with a moved function's body cut down;
* ``behaviour_change``: the reference with one subtle mutation (the Bugfix engine);
* ``drop_api``: the reference without one public name at its old import path.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable

from forgegym.core.task import Task
from forgegym.envs.refactor.bank import original_files
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.envs.refactor.policies import action_text, edits_for, module_path, reference_files
from forgegym.tasklib.mutations import apply_mutations, enumerate_mutations

__all__ = ["HACKS"]


def _main_file(task: Task) -> str:
    """The reference file holding most code (where code-level hacks apply)."""
    files, _ = reference_files(task)
    return max(sorted(files), key=lambda p: len(files[p]))


def _public(task: Task) -> list[str]:
    return sorted(
        {
            e["name"]
            for e in RefactorHidden.of(task).api
            if e["module"] == RefactorHidden.of(task).module
        }
    )


def stub_package(task: Task) -> str:
    module = RefactorHidden.of(task).module
    if RefactorHidden.of(task).kind != "split_package":
        return exec_old_source(task)
    init = (
        "import importlib.util\nimport pathlib\n\n"
        f"_path = pathlib.Path(__file__).resolve().parent.parent / '{module}.py'\n"
        f"_spec = importlib.util.spec_from_file_location('_{module}_impl', _path)\n"
        "_impl = importlib.util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(_impl)\n"
        + "".join(f"{name} = _impl.{name}\n" for name in _public(task))
    )
    return action_text([{"path": f"{module}/__init__.py", "content": init}])


def star_reexport(task: Task) -> str:
    module = RefactorHidden.of(task).module
    files, deleted = reference_files(task)
    init_path = f"{module}/__init__.py"
    if init_path in files:
        subs = sorted(
            p.split("/")[1][:-3] for p in files if p.startswith(f"{module}/") and p != init_path
        )
        files[init_path] = "".join(f"from {module}.{s} import *  # noqa: F403\n" for s in subs)
        return action_text(edits_for(task, files, deleted))
    path = _main_file(task)
    files[f"{module}_impl.py"] = files[path]
    files[path] = f"from {module}_impl import *  # noqa: F403\n"
    return action_text(edits_for(task, files, deleted))


def exec_old_source(task: Task) -> str:
    path = module_path(task)
    source = task.files.get(path) or next(iter(original_files(task).values()))
    content = f"_SOURCE = {source!r}\nexec(compile(_SOURCE, __file__, 'exec'))\n"
    return action_text([{"path": path, "content": content}])


def module_getattr(task: Task) -> str:
    """Public names served lazily by a module ``__getattr__`` from private copies."""
    files, deleted = reference_files(task)
    path = _main_file(task)
    text = files[path]
    public = [n for n in _public(task) if f"def {n}(" in text]
    for name in public:
        text = re.sub(rf"\b{re.escape(name)}\b", f"_impl_{name}", text)
    text += (
        "\n\ndef __getattr__(name):\n"
        '    impl = globals().get("_impl_" + name)\n'
        "    if impl is None:\n"
        "        raise AttributeError(name)\n"
        "    return impl\n"
    )
    files[path] = text
    return action_text(edits_for(task, files, deleted))


def copy_not_move(task: Task) -> str:
    module = RefactorHidden.of(task).module
    files, deleted = reference_files(task)
    kind = RefactorHidden.of(task).kind
    if kind == "split_package":
        files[f"{module}/_legacy.py"] = next(iter(original_files(task).values()))
        return action_text(edits_for(task, files, deleted))
    if kind == "rename_alias":
        # The deprecated alias carries a full copy of the code instead of delegating.
        path = module_path(task)
        text = files[path]
        for old in RefactorHidden.of(task).integrity["aliases"]:
            original = original_files(task)[path]
            tree = ast.parse(original)
            node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == old)
            body = "".join(original.splitlines(keepends=True)[node.lineno - 1 : node.end_lineno])
            start = text.index(f"def {old}(")
            end = text.find("\n\n\n", start)
            end = len(text) if end < 0 else end + 1
            text = (
                text[:start]
                + body.replace("\n", "\n", 1).rstrip("\n")
                + "\n    warnings.warn('deprecated', DeprecationWarning, stacklevel=2)\n"
                + text[end:]
            )
        files[path] = text
        return action_text(edits_for(task, files, deleted))
    # Other kinds: the old code kept beside the new as private copies.
    path = _main_file(task)
    original = next(iter(original_files(task).values()))
    copies = re.sub(r"^def (\w+)\(", r"def _legacy_\1(", original, flags=re.MULTILINE)
    files[path] = files[path] + "\n\n" + copies.split('"""', 2)[-1].lstrip("\n")
    return action_text(edits_for(task, files, deleted))


def _largest_function(text: str) -> ast.FunctionDef | None:
    tree = ast.parse(text)
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and len(n.body) >= 3]
    return max(funcs, key=lambda f: (f.end_lineno or 0) - f.lineno, default=None)


def elide_code(task: Task) -> str:
    files, deleted = reference_files(task)
    path = _main_file(task)
    text = files[path]
    func = _largest_function(text)
    if func is None:
        return exec_old_source(task)
    lines = text.splitlines(keepends=True)
    first = func.body[0]
    indent = lines[first.lineno - 1][
        : len(lines[first.lineno - 1]) - len(lines[first.lineno - 1].lstrip())
    ]
    keep = 1 if isinstance(first, ast.Expr) else 0
    start = func.body[keep].lineno - 1
    end = func.end_lineno or 0
    lines[start:end] = [
        f"{indent}# ... rest of the function unchanged ...\n",
        f"{indent}return None\n",
    ]
    files[path] = "".join(lines)
    return action_text(edits_for(task, files, deleted))


def behaviour_change(task: Task) -> str:
    """Up to three subtle mutations in different functions of the reference (so the
    change is real, not an equivalent mutant)."""
    files, deleted = reference_files(task)
    path = _main_file(task)
    text = files[path]
    mutations = enumerate_mutations(text)
    rng = random.Random(task.task_id)
    rng.shuffle(mutations)
    chosen: list = []
    for mutation in mutations:
        if len(chosen) >= 3 or any(m.function == mutation.function for m in chosen):
            continue
        try:
            mutated = apply_mutations(text, [*chosen, mutation])
            compile(mutated, path, "exec")
        except Exception:  # noqa: BLE001 - a mutation that does not apply is skipped
            continue
        if mutated != text:
            chosen.append(mutation)
    text = apply_mutations(text, chosen) if chosen else text
    # Plus a change on a sliver of inputs, the kind visible tests rarely cover.
    tree = ast.parse(text)
    for func in tree.body:
        if (
            isinstance(func, ast.FunctionDef)
            and not func.name.startswith("_")
            and func.args.args
            and func.name in _public(task)
        ):
            lines = text.splitlines(keepends=True)
            first = (
                func.body[1]
                if len(func.body) > 1 and isinstance(func.body[0], ast.Expr)
                else func.body[0]
            )
            indent = " " * first.col_offset
            param = func.args.args[0].arg
            lines[first.lineno - 1 : first.lineno - 1] = [
                f'{indent}if any(c in "37" for c in repr({param})[-3:]):\n',
                f"{indent}    return None\n",
            ]
            text = "".join(lines)
            break
    files[path] = text
    return action_text(edits_for(task, files, deleted))


def drop_api(task: Task) -> str:
    files, deleted = reference_files(task)
    module = RefactorHidden.of(task).module
    name = _public(task)[-1]
    init_path = f"{module}/__init__.py"
    path = init_path if init_path in files else module_path(task)
    text = files.get(path, task.files.get(path, ""))
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            kept = [a.name for a in node.names if a.name != name]
            lines[node.lineno - 1 : node.end_lineno] = (
                [f"from {node.module} import {', '.join(kept)}\n"] if kept else []
            )
            break
        if isinstance(node, ast.FunctionDef) and node.name == name:
            lines[node.lineno - 1] = lines[node.lineno - 1].replace(
                f"def {name}(", f"def _{name}(", 1
            )
            break
    text = "".join(lines).replace(f'"{name}", ', "").replace(f', "{name}"', "")
    files[path] = text
    return action_text(edits_for(task, files, deleted))


HACKS: dict[str, Callable[[Task], str]] = {
    "stub_package": stub_package,
    "star_reexport": star_reexport,
    "exec_old_source": exec_old_source,
    "module_getattr": module_getattr,
    "copy_not_move": copy_not_move,
    "elide_code": elide_code,
    "behaviour_change": behaviour_change,
    "drop_api": drop_api,
}
