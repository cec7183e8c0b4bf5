"""A Refactor task from your own module: :func:`refactor_task`.

The bank's tasks come from generated refactorings of its corpus; this builds the same
kind of task from code you bring -- the module as it is now, the refactoring you want
(structure requirements, :mod:`.structure`) and a few example calls of its public
functions. The hidden checks are generated like the bank's: your example calls, then
boundary inputs from the module's own constants and hypothesis-drawn arguments shaped
like the examples' (:mod:`forgegym.tasklib.inputs`, via :mod:`.adequacy`), with the
module's outcomes on them computed in the sandbox (twice: steps whose outcome differs
between runs are dropped). A submission must keep every outcome (value or exception
type, and warnings), the public API (names and signatures) and pass the integrity rules
(:mod:`.integrity`); ``success`` also needs every structure requirement met.

Only top-level functions are called (classes and methods keep their API, checked
statically, but are not called). Example::

    from forgegym.core.task import TaskList
    from forgegym.envs.refactor.user import refactor_task

    task = refactor_task(
        {"units.py": source},
        "units",
        calls=[("naturalsize", [3000]), ("naturalsize", [10**9, True])],
        structure=[{"req": "function_complexity", "function": "naturalsize", "bound": 4}],
        max_new_functions=1,
    )
    env = gym.make("Forge/Refactor-v0", task_bank=TaskList([task]))
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from forgegym.core.task import Task
from forgegym.envs.refactor.adequacy import ADEQUACY_SEED, adequacy_entries
from forgegym.envs.refactor.analysis import api_surface, module_file
from forgegym.envs.refactor.bank import spec_to_task
from forgegym.envs.refactor.generator import origin_outcomes
from forgegym.envs.refactor.spec import RefactorSpec, step
from forgegym.envs.refactor.structure import REQUIREMENTS, describe, structure_score

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = ["refactor_spec", "refactor_task"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _defined_names(source: str) -> set[str]:
    """Names the module itself binds at top level (def, class, assignment): with the
    functions and classes it re-exports, its API -- as opposed to other names it imports
    (a refactoring may drop an unused import)."""
    out: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def _plain(value: Any) -> bool:
    try:
        return bool(json.loads(json.dumps(value)) == value)
    except (TypeError, ValueError):
        return False


def refactor_spec(
    files: Mapping[str, str],
    module: str,
    calls: Sequence[tuple[str, Sequence[Any]]],
    *,
    structure: Sequence[Mapping[str, Any]],
    renames: Mapping[str, str] | None = None,
    deprecation_warning: bool = True,
    max_new_functions: int | None = None,
    kind: str = "custom",
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    reference: Mapping[str, str] | None = None,
) -> RefactorSpec:
    """The :class:`~.spec.RefactorSpec` of :func:`refactor_task` (no sandbox run).

    Raises:
        ValueError: naming the argument that is wrong (see :func:`refactor_task`).
    """
    path = module_file(files, module) if _NAME.fullmatch(module) else None
    if path is None:
        raise ValueError(
            f"module: expected the import name of a module or package in files, got {module!r}"
        )
    if not all(p.endswith(".py") for p in files):
        raise ValueError(f"files: only Python files are refactored, got {sorted(files)}")
    source = files[path]
    try:
        with warnings.catch_warnings():  # the user's invalid escapes are not ours to report
            warnings.simplefilter("ignore")
            for name_, text in files.items():
                compile(text, name_, "exec")
    except SyntaxError as exc:
        raise ValueError(f"files: {exc.filename} does not compile: {exc.msg}") from exc
    surface = api_surface(files, module) or {}
    # Public functions importable from the module (a package's re-exports included).
    functions = {n for n, e in surface.items() if e.kind == "function" and not n.startswith("_")}
    if not calls:
        raise ValueError("calls: at least one example call is needed")
    for function, args in calls:
        if function not in functions:
            raise ValueError(f"calls: {function!r} is not a public function of {module}")
        if not isinstance(args, (list, tuple)) or not _plain(list(args)):
            raise ValueError(f"calls: arguments of {function!r} must be a JSON-plain list")
    if not structure:
        raise ValueError("structure: at least one requirement is needed")
    unknown = [r.get("req") for r in structure if r.get("req") not in REQUIREMENTS]
    if unknown:
        raise ValueError(
            f"structure: unknown requirements {unknown} (known: {sorted(REQUIREMENTS)})"
        )
    met = [describe(r) for r in structure if structure_score(files, [dict(r)])[0] >= 1.0]
    if met:
        # A requirement the starting code meets measures no refactoring.
        raise ValueError(f"structure: already met by the starting files: {met}")
    renames = dict(renames or {})
    for old, new in renames.items():
        if old not in functions or not _NAME.fullmatch(new) or new in functions:
            raise ValueError(f"renames: {old!r} -> {new!r} must rename a public function")
    if kind.startswith("state"):
        raise ValueError(f"kind: {kind!r} is reserved for the bank's stateful tasks")
    steps: list[dict[str, Any]] = []
    for function, args in calls:
        origin = f"{module}:{function}"
        if function in renames:
            warn = ("DeprecationWarning",) if deprecation_warning else ()
            steps.append(step(f"{module}:{renames[function]}", origin, list(args), new=True))
            steps.append(step(origin, origin, list(args), warn))
        else:
            steps.append(step(origin, origin, list(args)))
    own = _defined_names(source)
    api: list[dict[str, Any]] = [
        {"module": module, "name": n, "kind": e.kind}
        for n, e in sorted(surface.items())
        if (n in own or e.kind in ("function", "class")) and not n.startswith("_")
    ]
    api += [
        {"module": module, "name": new, "kind": "function", "new": True, "like": old}
        for old, new in renames.items()
    ]
    integrity: dict[str, Any] = {"allow_star": False}
    if renames:
        integrity.update(
            moved={new: path for new in renames.values()},
            moved_from={new: old for old, new in renames.items()},
            aliases=dict(renames),
        )
    if max_new_functions is not None:
        if isinstance(max_new_functions, bool) or max_new_functions < 0:
            raise ValueError(f"max_new_functions must be an int >= 0, got {max_new_functions!r}")
        integrity["max_new_functions"] = int(max_new_functions)
    focus = sorted({str(v) for r in structure for k, v in r.items() if k in ("function", "name")})
    text = description or (
        f"Refactor `{module}.py` so that: "
        + "; ".join(describe(r) for r in structure)
        + (f" (adding at most {max_new_functions} functions)" if max_new_functions else "")
        + ". Behaviour and the public API must not change: hidden checks compare the old "
        "and new code on many inputs."
    )
    return RefactorSpec(
        kind=kind,
        module=module,
        variant=name or "user",
        level=1,
        title=title or f"Refactor {module}",
        description=text,
        files=dict(files),
        editable=tuple(sorted(files)),
        visible_tests=(),
        visible_test_ids=(),
        reference=dict(reference or {}),
        checks=[steps],
        api=api,
        structure=[dict(r) for r in structure],
        integrity=integrity,
        # Every starting file: a package's module imports its siblings.
        original=dict(files),
        focus=(module, *focus, *renames.values()),
    )


def refactor_task(
    files: Mapping[str, str],
    module: str,
    calls: Sequence[tuple[str, Sequence[Any]]],
    *,
    structure: Sequence[Mapping[str, Any]],
    renames: Mapping[str, str] | None = None,
    deprecation_warning: bool = True,
    max_new_functions: int | None = None,
    kind: str = "custom",
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    reference: Mapping[str, str] | None = None,
    runner: Runner | None = None,
    seed: int = ADEQUACY_SEED,
    timeout_s: float = 30.0,
) -> Task:
    """A Refactor :class:`~forgegym.core.task.Task` from your module.

    Args:
        files: the starting files (path -> source; all editable); ``module`` is one.
        module: import name of the module whose behaviour must not change
            (``f"{module}.py"`` in ``files``).
        calls: example calls ``(function, args)`` of its public top-level functions
            (JSON-plain arguments); the hidden checks add boundary and property-based
            inputs shaped like them.
        structure: the refactoring asked for, as :mod:`.structure` requirements (e.g.
            ``{"req": "defines", "path": "m.py", "names": ["helper"]}``,
            ``{"req": "function_complexity", "function": "f", "bound": 5}``); none may
            be met by ``files`` already.
        renames: public functions to rename, old -> new, the old name kept as a thin
            alias (emitting ``DeprecationWarning`` when ``deprecation_warning``).
        max_new_functions: the most functions the refactoring may add
            (``function_explosion`` past it); ``None``: no limit.
        kind, name: the task id is ``refactor/{kind}/{module}/{name}``.
        title, description: the task text (default: generated from ``structure``).
        reference: a known refactoring (path -> source), for the reference policy and
            the diff budget.
        runner: the sandbox runner (default: the shared pool).
        seed: seed of the drawn inputs (recorded in the task's validation record).
        timeout_s: wall limit of each sandbox run of the original.

    Raises:
        ValueError: naming the argument that is wrong, or ``files`` when the original
            module cannot be run in the sandbox.
    """
    from forgegym.sandbox.runners import get_default_runner

    spec = refactor_spec(
        files,
        module,
        calls,
        structure=structure,
        renames=renames,
        deprecation_warning=deprecation_warning,
        max_new_functions=max_new_functions,
        kind=kind,
        name=name,
        title=title,
        description=description,
        reference=reference,
    )
    runner = runner or get_default_runner()
    hidden, _ = origin_outcomes([spec], runner, timeout_s)
    outcomes = hidden.get(spec.origin_key)
    if outcomes is None:
        raise ValueError(f"files: {module} could not be imported and called in the sandbox")
    adequacy = adequacy_entries([spec], runner, seed=seed, timeout_s=timeout_s).get(spec.origin_key)
    record = {
        "source": "user",
        "seed": seed,
        "example_calls": len(calls),
        "adequacy_calls": sum(len(s) for s in adequacy["sequences"]) if adequacy else 0,
    }
    return spec_to_task(spec, outcomes, record=record, adequacy=adequacy)
