"""Repo mode: one FlakyRepair task over a user's repository (``repo_path`` + ``test_id``).

* Files: every ``.py`` file (editable) plus the pytest configuration and small data
  files (read-only: grading restores them, so the repository's configuration as it
  was before the episode is what runs).
* Test ids are pytest's own node ids, collected in the sandbox: functions, methods of
  test classes and ``unittest.TestCase`` subclasses, parametrised ids (``test_x[1-2]``).
* The repository's ``conftest.py`` files and pytest settings (collection patterns,
  ``pythonpath``, ``usefixtures``, ``filterwarnings``) are honoured; a ``src`` layout
  is importable. An agent's change to a ``conftest.py`` is scanned like a test change,
  and a pytest hook it adds or changes there is a hack (:func:`conftest_findings`).
* Power: bug-injected variants of the code the target test exercises (the Bugfix
  mutation engine on the functions and methods the test names, and the module-level
  functions those call), :func:`derive_mutants`.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst

from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.flaky.antihack import conftest_findings
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.rewards import bounded
from forgegym.rewards.antihack.index import dotted_name
from forgegym.sandbox.jobs import PytestResult, RunStatus
from forgegym.sandbox.workspace import Workspace, validate_relative_path
from forgegym.tasklib.mutations import OPERATORS, Mutation, apply_mutations, enumerate_mutations
from forgegym.tasklib.project import (
    CONFIG_FILES,
    dependency_environment,
    is_test_file,
    read_project,
    run_options,
)

__all__ = [
    "CONFIG_FILES",
    "MutantSpec",
    "RepoTaskBank",
    "conftest_findings",
    "derive_mutants",
    "excused_mutants",
    "is_seam",
    "mutant_source",
    "read_repository",
    "run_options",
]

MAX_MUTANTS = 8


def read_repository(
    root: Path, *, max_file_bytes: int, max_files: int
) -> tuple[dict[str, str], list[str]]:
    """``(files, editable)``: the repository as :func:`~forgegym.tasklib.project.read_project`
    reads it (every ``.py`` file, the pytest configuration and small data files) and
    its ``.py`` files (FlakyRepair's editable files: a repair may touch the code or the
    tests)."""
    copy = read_project(root, max_file_bytes=max_file_bytes, max_files=max_files)
    # FlakyRepair's reruns copy text files only: a module over the cap would be missing
    # from every rerun (its tests failing for a reason nobody sees), so it is an error.
    for path, data in copy.data_files.items():
        if path.endswith(".py"):
            raise ValueError(
                f"repo_path: {path} ({len(data)} bytes) is over max_file_bytes={max_file_bytes}"
            )
    return copy.files, [p for p in copy.files if p.endswith(".py")]


# ----------------------------------------------------------------------------- mutants
@dataclass(frozen=True)
class MutantSpec:
    """One bug-injected variant: ``mutation`` in ``function`` (``Class.method`` for a
    method) of ``path``; ``source`` is the mutated pristine file."""

    path: str
    function: str
    mutation: Mutation
    source: str

    @property
    def label(self) -> str:
        return f"{self.path}::{self.function} {self.mutation.operator}@{self.mutation.site}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "function": self.function,
            "mutation": self.mutation.to_json(),
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MutantSpec:
        return cls(
            str(data["path"]),
            str(data["function"]),
            Mutation.from_json(data["mutation"]),
            str(data["source"]),
        )


_PLACEHOLDER = "fg_mutation_target"


def _locate(module: cst.Module, function: str) -> tuple[int, int | None] | None:
    cls_name, _, meth = function.rpartition(".")
    for i, stmt in enumerate(module.body):
        if not cls_name and isinstance(stmt, cst.FunctionDef) and stmt.name.value == function:
            return i, None
        if cls_name and isinstance(stmt, cst.ClassDef) and stmt.name.value == cls_name:
            body = stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ()
            for j, item in enumerate(body):
                if isinstance(item, cst.FunctionDef) and item.name.value == meth:
                    return i, j
    return None


def _function_node(module: cst.Module, where: tuple[int, int | None]) -> cst.FunctionDef:
    stmt = module.body[where[0]]
    if where[1] is None:
        assert isinstance(stmt, cst.FunctionDef)
        return stmt
    assert isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock)
    item = stmt.body.body[where[1]]
    assert isinstance(item, cst.FunctionDef)
    return item


def _mutations_of(source: str, function: str) -> list[Mutation]:
    """Every mutation site of ``function`` (a top-level function or ``Class.method``),
    numbered as :func:`mutant_source` applies them."""
    module = cst.parse_module(source)
    where = _locate(module, function)
    if where is None:
        return []
    fn = _function_node(module, where).with_changes(
        name=cst.Name(_PLACEHOLDER), decorators=(), leading_lines=()
    )
    alone = cst.Module(body=[fn]).code
    return [
        Mutation(function, m.operator, m.site)
        for m in enumerate_mutations(alone)
        if m.function == _PLACEHOLDER
    ]


def mutant_source(source: str, function: str, mutation: Mutation) -> str | None:
    """``source`` with ``mutation`` applied to ``function`` (``None``: not applicable,
    e.g. the function changed so that the site no longer exists)."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None
    where = _locate(module, function)
    if where is None:
        return None
    original = _function_node(module, where)
    alone = cst.Module(
        body=[original.with_changes(name=cst.Name(_PLACEHOLDER), decorators=(), leading_lines=())]
    ).code
    try:
        mutated = apply_mutations(alone, [Mutation(_PLACEHOLDER, mutation.operator, mutation.site)])
    except (ValueError, cst.ParserSyntaxError):
        return None
    new_fn = cst.parse_module(mutated).body[0]
    assert isinstance(new_fn, cst.FunctionDef)
    new_fn = new_fn.with_changes(
        name=original.name, decorators=original.decorators, leading_lines=original.leading_lines
    )
    body = list(module.body)
    if where[1] is None:
        body[where[0]] = new_fn
    else:
        cls = body[where[0]]
        assert isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)
        items = list(cls.body.body)
        items[where[1]] = new_fn
        body[where[0]] = cls.with_changes(body=cls.body.with_changes(body=items))
    return module.with_changes(body=body).code


def _module_files(files: Mapping[str, str], roots: Sequence[str]) -> dict[str, str]:
    """Dotted module name -> file path, for every ``.py`` file under an import root."""
    out: dict[str, str] = {}
    for root in ["", *roots]:
        prefix = "" if root in ("", ".") else root.rstrip("/") + "/"
        for path in files:
            if not path.endswith(".py") or not path.startswith(prefix):
                continue
            rel = path[len(prefix) : -3].split("/")
            if rel[-1] == "__init__":
                rel = rel[:-1]
            if rel and all(part.isidentifier() for part in rel):
                out.setdefault(".".join(rel), path)
    return out


def _package_of(path: str, files: Mapping[str, str], modules: Mapping[str, str]) -> str:
    for name, file in modules.items():
        if file == path:
            return name if path.endswith("__init__.py") else name.rpartition(".")[0]
    return ""


def _imports(
    tree: ast.Module, path: str, files: Mapping[str, str], modules: Mapping[str, str]
) -> dict[str, str]:
    """Local name -> dotted name (``m`` -> ``pkg.mod``, ``f`` -> ``pkg.mod.f``)."""
    out: dict[str, str] = {}
    package = _package_of(path, files, modules)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    out[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*parts, *([base] if base else [])])
            for alias in node.names:
                if alias.name != "*":
                    out[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return out


def _definitions(source: str) -> tuple[dict[str, ast.AST], dict[str, list[str]]] | None:
    """Top-level functions and classes (name -> node) and each class's methods."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defs: dict[str, ast.AST] = {}
    methods: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defs[node.name] = node
        elif isinstance(node, ast.ClassDef):
            defs[node.name] = node
            methods[node.name] = [
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef)
                and (not item.name.startswith("_") or item.name == "__init__")
            ]
    return defs, methods


def _target_nodes(tree: ast.Module, target: str) -> list[ast.AST]:
    """The target test's function, its class's setup methods, and fixtures it names."""
    parts = target.split("::")[1:]
    if not parts:
        return []
    parts[-1] = parts[-1].split("[", 1)[0]
    scope: list[ast.stmt] = list(tree.body)
    found: list[ast.AST] = []
    for i, name in enumerate(parts):
        match = next(
            (
                n
                for n in scope
                if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and n.name == name
            ),
            None,
        )
        if match is None:
            return found
        if isinstance(match, ast.ClassDef) and i < len(parts) - 1:
            # Its setup methods and class-level state (``graph = SimpleGraph()``).
            found += [
                n
                for n in match.body
                if (
                    isinstance(n, ast.FunctionDef)
                    and n.name in ("setUp", "setup_method", "setUpClass", "setup_class")
                )
                or isinstance(n, ast.Assign | ast.AnnAssign)
            ]
            scope = list(match.body)
        else:
            found.append(match)
    fn = found[-1] if found else None
    if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        wanted = {a.arg for a in fn.args.args}
        found += [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    return found


def exercised_functions(
    files: Mapping[str, str], target: str, roots: Sequence[str]
) -> list[tuple[str, str]]:
    """``(path, function)`` pairs of repository code the target test names (functions,
    and every public method and ``__init__`` of a class it names), plus the module-level
    functions of the same module those call. Test files are never mutated."""
    test_path = target.split("::", 1)[0]
    try:
        tree = ast.parse(files[test_path])
    except (KeyError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    modules = _module_files(files, roots)
    names = _imports(tree, test_path, files, modules)
    out: list[tuple[str, str]] = []

    def add(path: str, function: str) -> None:
        if (path, function) in out or is_test_file(path) or _is_oracle(files[path], function):
            return
        out.append((path, function))

    for node in _target_nodes(tree, target):
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Attribute | ast.Name):
                continue
            dotted = dotted_name(sub)
            if not dotted:
                continue
            head, _, rest = dotted.partition(".")
            if head not in names:
                continue
            full = names[head] + (f".{rest}" if rest else "")
            _resolve(full, files, modules, add)
    # One level deeper: module-level functions the exercised code calls by name.
    for path, function in list(out):
        info = _definitions(files[path])
        if info is None:
            continue
        defs, _ = info
        owner = defs.get(function.split(".")[0])
        body: ast.AST | None = owner
        if isinstance(owner, ast.ClassDef):
            body = next(
                (
                    n
                    for n in owner.body
                    if isinstance(n, ast.FunctionDef) and n.name == function.split(".")[-1]
                ),
                None,
            )
        if body is None:
            continue
        for sub in ast.walk(body):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                callee = defs.get(sub.func.id)
                if isinstance(callee, ast.FunctionDef):
                    add(path, sub.func.id)
    return out


_ASSERTION_EXCEPTIONS = {"AssertionError", "failureException"}


def _is_oracle(source: str, function: str) -> bool:
    """``function`` (``Class.method`` for a method) of ``source`` is an assertion helper:
    its name starts with ``assert`` and its body asserts (an ``assert``, a ``raise
    AssertionError``/``self.failureException``, or a call of another ``assert*`` or
    ``fail``). A helper like ``assert_greater_equal`` in ``torch/testing`` is the test's
    oracle, not code under test: a mutant of it measures the oracle, and a fix that
    moves the test to a better oracle (``assert_greater_almost_equal``) rightly stops
    "catching" it."""
    if not function.rpartition(".")[2].lstrip("_").lower().startswith("assert"):
        return False
    info = _definitions(source)
    if info is None:
        return False
    cls_name, _, name = function.rpartition(".")
    node = info[0].get(cls_name or name)
    if cls_name and isinstance(node, ast.ClassDef):
        node = next(
            (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == name), None
        )
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Assert):
            return True
        if isinstance(sub, ast.Raise) and sub.exc is not None:
            exc = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
            name_of = exc.attr if isinstance(exc, ast.Attribute) else getattr(exc, "id", "")
            if name_of in _ASSERTION_EXCEPTIONS:
                return True
        if isinstance(sub, ast.Call):
            callee = sub.func.attr if isinstance(sub.func, ast.Attribute) else ""
            callee = callee or (sub.func.id if isinstance(sub.func, ast.Name) else "")
            if callee == "fail" or callee.lstrip("_").lower().startswith("assert"):
                return True
    return False


def _resolve(full: str, files: Mapping[str, str], modules: Mapping[str, str], add: Any) -> None:
    parts = full.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:cut])
        if module not in modules:
            continue
        path = modules[module]
        info = _definitions(files[path])
        if info is None:
            return
        defs, methods = info
        symbol = parts[cut]
        node = defs.get(symbol)
        if isinstance(node, ast.FunctionDef):
            add(path, symbol)
        elif isinstance(node, ast.ClassDef):
            wanted = parts[cut + 1 : cut + 2]
            for meth in methods.get(symbol, []):
                if not wanted or meth == wanted[0] or meth == "__init__":
                    add(path, f"{symbol}.{meth}")
        return


_TIMING = re.compile(r"sleep|timeout|delay|latency|jitter|backoff|random\.|uniform|randint|\bwait")


def _timing_only(original: str, mutated: str) -> bool:
    """A mutant that only changes how long something takes or what a random draw is
    (``sleep(uniform(0, 0.1))`` -> ``sleep(uniform(0, 1.1))``): not a bug a test should
    catch, and a test fixed to wait for the event rightly stops "catching" it."""
    changed = [
        line
        for line in difflib.unified_diff(original.splitlines(), mutated.splitlines(), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return any(_TIMING.search(line) for line in changed)


def derive_mutants(
    files: Mapping[str, str], target: str, roots: Sequence[str], *, limit: int = MAX_MUTANTS
) -> list[MutantSpec]:
    """Up to ``limit`` single-site mutants of the code the target exercises, spread
    round-robin over functions, then operators (deterministic)."""
    per_function: list[list[MutantSpec]] = []
    for path, function in exercised_functions(files, target, roots):
        try:
            mutations = _mutations_of(files[path], function)
        except cst.ParserSyntaxError:
            continue
        by_op: dict[str, list[Mutation]] = {}
        for m in mutations:
            by_op.setdefault(m.operator, []).append(m)
        ordered: list[Mutation] = []
        queues = [by_op[op] for op in OPERATORS if op in by_op]
        while any(queues):
            for q in queues:
                if q:
                    ordered.append(q.pop(0))
        specs = []
        for m in ordered[: limit * 3]:
            source = mutant_source(files[path], function, m)
            if source is None or source == files[path] or _timing_only(files[path], source):
                continue
            specs.append(MutantSpec(path, function, m, source))
            if len(specs) >= limit * 2:
                break
        if specs:
            per_function.append(specs)
    chosen: list[MutantSpec] = []
    while len(chosen) < limit and any(per_function):
        for specs in per_function:
            if specs and len(chosen) < limit:
                chosen.append(specs.pop(0))
    return chosen


def _parses_within_bounds(source: str) -> bool:
    """Agent text reaches libcst only when the parent's bounded parser accepts it."""
    return bounded.parse_or_none(source) is not None


def _change(before: str, after: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lines a mutation removes and adds (stripped), whatever their position."""
    removed: list[str] = []
    added: list[str] = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0):
        if line.startswith(("+++", "---")):
            continue
        if line[:1] == "-":
            removed.append(line[1:].strip())
        elif line[:1] == "+":
            added.append(line[1:].strip())
    return tuple(removed), tuple(added)


def submitted_mutant(spec: MutantSpec, submitted: Mapping[str, str], pristine: str = "") -> str:
    """The mutant applied to the agent's version of the file (so a fix the agent made
    elsewhere in it stays), or the pristine-based mutant where the site is gone.

    Sites are numbered in source order, so a statement the agent inserted into the
    function shifts them: the mutation is matched by what it changes (the same lines
    removed and added as in ``pristine``, the file the mutant was derived from), at
    its own site number first, else at the first site of the same operator that makes
    the same change. A site that makes another change is a different mutant (removing
    the agent's new readiness probe is not removing the thread start the original test
    caught), never the one the original test was judged on."""
    current = submitted.get(spec.path)
    if current is None or not _parses_within_bounds(current):
        return spec.source
    want = _change(pristine, spec.source) if pristine else None
    try:
        others = _mutations_of(current, spec.function) if want is not None else []
    except cst.ParserSyntaxError:
        others = []
    sites = [spec.mutation.site] + [
        m.site
        for m in others
        if m.operator == spec.mutation.operator and m.site != spec.mutation.site
    ]
    for site in sites:
        mutation = Mutation(spec.mutation.function, spec.mutation.operator, site)
        source = mutant_source(current, spec.function, mutation)
        if source is None or source == current:
            continue
        if want is None or _change(current, source) == want:
            return source
    return spec.source


#: Calls that read a nondeterministic source: the clock, a random draw, the environment.
_NONDETERMINISTIC = re.compile(
    r"(^|\.)(time\.(time|time_ns|monotonic|perf_counter)|datetime\.(now|utcnow|today)"
    r"|date\.today|random\.\w+|uuid\.uuid[14]|os\.urandom|secrets\.\w+|os\.getenv"
    r"|environ\.get)$"
)


def is_seam(source: str, function: str) -> bool:
    """``function`` is a top-level nondeterminism seam of ``source``: its body (after a
    docstring) is one ``return`` of an expression that reads the clock, a random draw or
    the environment (``def _now(): return datetime.fromtimestamp(time.time(), utc)``)."""
    if "." in function:
        return False
    info = _definitions(source)
    node = info[0].get(function) if info is not None else None
    if not isinstance(node, ast.FunctionDef):
        return False
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    return any(
        isinstance(sub, ast.Call) and _NONDETERMINISTIC.search(dotted_name(sub.func) or "")
        for sub in ast.walk(body[0].value)
    )


def patched_names(files: Mapping[str, str], paths: Sequence[str]) -> set[str]:
    """The attribute names the test files ``paths`` replace with a fake:
    ``mock.patch.object(mod, "name")``, ``monkeypatch.setattr(mod, "name", ...)`` and
    ``mock.patch("pkg.mod.name")`` / ``monkeypatch.setattr("pkg.mod.name", ...)``."""
    names: set[str] = set()
    for path in paths:
        source = files.get(path)
        if source is None or not _parses_within_bounds(source):
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for sub in ast.walk(tree):
            if not isinstance(sub, ast.Call):
                continue
            callee = dotted_name(sub.func) or ""
            args = [a.value if isinstance(a, ast.Constant) else None for a in sub.args[:2]]
            if callee.endswith(("patch.object", "setattr")) and len(args) == 2:
                if isinstance(args[1], str):
                    names.add(args[1])
                elif isinstance(args[0], str) and "." in args[0]:
                    names.add(args[0].rpartition(".")[2])
            elif callee.endswith("patch") and args and isinstance(args[0], str):
                names.add(args[0].rpartition(".")[2])
    return names


def excused_mutants(
    specs: Sequence[MutantSpec],
    pristine: Mapping[str, str],
    submitted: Mapping[str, str],
    test_paths: Sequence[str],
) -> set[int]:
    """Indices of ``specs`` a repaired test need not catch: mutants of a clock/random
    seam (:func:`is_seam`) that the submitted tests replace with a fake. Freezing the
    clock the code reads (``mock.patch.object(mod, "_now", return_value=MONDAY)``, the
    ``freeze_time`` of a codebase with a ``_now`` seam) is the fix for a time-dependent
    test, and it rightly stops running the seam; every other mutant still counts."""
    patched = patched_names({**pristine, **submitted}, test_paths)
    return {
        i
        for i, spec in enumerate(specs)
        if spec.function in patched and is_seam(pristine.get(spec.path, ""), spec.function)
    }


# ------------------------------------------------------------------------- task bank
class RepoTaskBank:
    """A one-task bank over a user's repository (``repo_path`` + ``test_id``).

    Editable: every ``.py`` file of the repository under ``max_file_bytes`` (up to
    ``max_files`` files); read-only: its pytest configuration and small data files.
    The test ids are collected by pytest in the sandbox (:meth:`collect`, called by the
    environment with its runner before the first reset)."""

    family = "flaky"
    difficulty_levels: tuple[int, ...] = (1,)

    def __init__(
        self,
        repo_path: str | Path,
        test_id: str,
        *,
        max_file_bytes: int,
        max_files: int,
        test_dependencies: Sequence[str] | None = None,
        cache_dir: str | Path | None = None,
        time_limit_multiple: float = 3.0,
        time_limit_cap_s: float = 600.0,
    ) -> None:
        from forgegym.core.env import check_number

        self.time_limit_cap_s = check_number(
            "time_limit_cap_s", time_limit_cap_s, low=1.0, high=3600.0
        )
        self.time_limit_multiple = check_number(
            "time_limit_multiple", time_limit_multiple, low=1.0, high=100.0
        )
        root = Path(repo_path)
        if not root.is_dir():
            raise ValueError(f"repo_path: {str(repo_path)!r} is not a directory")
        if not isinstance(test_id, str) or "::" not in test_id:
            raise ValueError(f"test_id must look like 'tests/test_x.py::test_y', got {test_id!r}")
        test_path = validate_relative_path(test_id.partition("::")[0])
        self.root = root
        self.target = f"{test_path}::{test_id.partition('::')[2]}"
        self.test_path = test_path
        self.files, self.editable = read_repository(
            root, max_file_bytes=max_file_bytes, max_files=max_files
        )
        if test_path not in self.files:
            raise ValueError(f"test_id: {test_path!r} is not a Python file of the repository")
        self.options = run_options(self.files)
        # The test dependencies, installed once into the cached environment (shared with
        # Bugfix's repository mode): explicit ones, else what the repository declares.
        site = dependency_environment(self.files, root, test_dependencies, cache_dir=cache_dir)
        if site is not None:
            self.options["site_dirs"] = [str(site)]
        self._task: Task | None = None

    @property
    def task(self) -> Task:
        if self._task is None:
            raise RuntimeError("RepoTaskBank.collect(runner) has not run")
        return self._task

    def collect(self, runner: Any) -> Task:
        """Collect the test file's ids in the sandbox and build the task. Raises
        ``ValueError`` when the file does not collect or ``test_id`` is not among them."""
        if self._task is not None:
            return self._task
        from forgegym.envs.flaky.runs import collect_job

        ws = Workspace(self.files, self.editable, prefix="fg-flaky-collect-")
        try:
            directory = ws.materialise({})
            result = runner.run(collect_job(str(directory), [self.test_path], self.options))
        finally:
            ws.close()
        if not isinstance(result, PytestResult) or result.status is not RunStatus.COMPLETED:
            detail = getattr(result, "detail", "") or getattr(result, "stderr_tail", "")
            raise ValueError(
                f"test_id: {self.test_path} does not collect "
                f"({getattr(result, 'status', '?')}): {str(detail)[:600]}"
            )
        ids = list(dict.fromkeys(result.collected_ids))
        if self.target not in ids:
            near = [i for i in ids if i.split("[")[0] == self.target.split("[")[0]] or ids
            raise ValueError(
                f"test_id: {self.target!r} is not a test pytest collects from "
                f"{self.test_path}; collected: {near[:12]}"
                + (f" (+{len(near) - 12} more)" if len(near) > 12 else "")
            )
        self.options["time_limit_s"] = self._measure(runner, ids)
        mutants = derive_mutants(self.files, self.target, self.options["paths"])
        digest = hashlib.sha256()
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + self.files[path].encode() + b"\0")
        digest.update(b"target\0" + self.target.encode())
        name = self.target.split("::", 1)[1]
        self._task = Task(
            task_id=f"flaky/repo/{self.root.name or 'repo'}/{digest.hexdigest()[:12]}",
            family="flaky",
            difficulty=1,
            title=f"Repair the flaky test {name}",
            description=(
                f"The test `{self.target}` of this repository is suspected to be flaky. Make "
                "it pass on every chaos rerun (test order, hash seed, time zone, locale, "
                "clock, thread interleavings, CPU pressure) without weakening it: it must "
                "still catch the bugs it caught (checked against bug-injected code)."
            ),
            files=self.files,
            editable_files=tuple(self.editable),
            visible_test_files=(self.test_path,),
            visible_test_ids=tuple(ids),
            hidden=FlakyHidden(
                target=self.target,
                test_ids=ids,
                test_paths=[self.test_path],
                scan_paths=sorted({self.test_path} | {p for p in self.files if is_test_file(p)}),
                repo_mutants=[m.to_json() for m in mutants],
                run_options=self.options,
                extended_chaos=True,
            ),
        )
        return self._task

    def _measure(self, runner: Any, ids: Sequence[str]) -> float:
        """The wall limit of every rerun: ``time_limit_multiple`` times a calm run of the
        whole test file (a rerun runs at most that file, or the target twice), at least
        10 s, at most ``time_limit_cap_s`` (a file that does not finish within the cap
        is a ``ValueError``), like Bugfix's repository mode."""
        from forgegym.envs.flaky.chaos import make_schedule
        from forgegym.envs.flaky.runs import chaos_jobs
        from forgegym.tasklib.agreement import time_limit

        calm = make_schedule(0, 1, extended=True)[:1]
        ws = Workspace(self.files, self.editable, prefix="fg-flaky-measure-")
        try:
            directory = ws.materialise({})
            options = {k: v for k, v in self.options.items() if k != "time_limit_s"}
            (job,) = chaos_jobs(
                str(directory),
                self.target,
                ids,
                [self.test_path],
                calm,
                self.time_limit_cap_s,
                options,
            )
            result = runner.run(job)
        finally:
            ws.close()
        if not isinstance(result, PytestResult) or result.status is RunStatus.TIMEOUT:
            raise ValueError(
                f"test_id: {self.test_path} does not run to completion in the sandbox within "
                f"time_limit_cap_s={self.time_limit_cap_s:.0f} s"
            )
        return time_limit(
            result.wall_s, multiple=self.time_limit_multiple, cap_s=self.time_limit_cap_s
        )

    def get(self, task_id: str) -> Task:
        if task_id != self.task.task_id:
            raise UnknownTaskError(task_id)
        return self.task

    def sample(self, rng: Any, difficulty: int | None = None) -> Task:
        return self.task

    def ids(self, difficulty: int | None = None) -> list[str]:
        return [self.task.task_id]

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        return [self.task.task_id][: max(0, n)]
