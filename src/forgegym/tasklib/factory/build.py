"""The real-code task factory: a pinned project -> a manifest of validated Bugfix tasks.

One project's build (:func:`build_project`):

1. **prepare** (:func:`prepare_project`): read the project as repository mode does (its
   pytest configuration, import roots, conftest files) and install its declared test
   dependencies into a cached environment (pinned to the versions installed, recorded);
2. **sandbox baseline**: every test file runs in the sandbox, the way grading runs it,
   twice; a test is *passing* when it passed both times (a file whose run the sandbox's
   runtime policy stops is left out whole, with the reason recorded);
3. **coverage**: the suite runs on the host through the trusted harness
   (:mod:`forgegym.tasklib.factory.harness`), which records the functions and methods each
   test calls (a ``sys.settrace`` *call* hook: never agent code); a test must also pass
   there;
4. **candidates**: every site of every mutation operator (:mod:`forgegym.tasklib.mutations`)
   in the covered functions and methods, shuffled by ``seed`` and capped;
5. **screen**: one host process swaps each candidate's code into the live function and runs
   the tests that cover it, up to the first failure; kept: compiles, fails a test, never
   times out, and a first failure (test and last line) unlike every kept mutant's;
6. **confirm in the sandbox**: each kept mutant is written into its file and the test files
   covering the function run in the sandbox through the warm pool, as grading will run
   them; fail-to-pass = the tests passing at build that fail (at least one, and the run
   completes); mutants with the same failing set and messages are deduplicated;
7. **manifest**: one JSON line per task (project, version, sha256, file, mutation, the shown
   and all fail-to-pass ids, pass-to-pass ids, the bug report, difficulty features and level),
   plus one ``<project>-<version>.project.json`` record (pinned test dependencies, the
   sandbox-passing tests, left-out files, the time limit). No source text: tasks
   materialise from the cached sdist.

Every choice is seeded and every list sorted, so the same pins and seed give the same
manifest (verdicts are deterministic for deterministic suites; only tests that passed
twice in the sandbox and on the host are used).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from forgegym.grading.phases import phase
from forgegym.sandbox.jobs import ProjectRun, PytestJob, PytestResult, RunStatus
from forgegym.sandbox.workspace import Workspace
from forgegym.tasklib.agreement import time_limit
from forgegym.tasklib.depenv import declared_test_dependencies, ensure_environment
from forgegym.tasklib.mutations import (
    SUBTLE_OPERATORS,
    Mutation,
    apply_to_module,
    enumerate_mutations,
    function_node,
    mutate_function,
)
from forgegym.tasklib.project import (
    MAX_FILE_BYTES,
    MAX_FILES,
    ProjectLayout,
    project_layout,
    read_project,
)

__all__ = [
    "BuildStats",
    "FactoryError",
    "PreparedProject",
    "build_pinned",
    "build_project",
    "difficulty_level",
    "prepare_project",
    "read_manifest",
    "read_project_record",
    "write_bank_files",
    "stats_table",
    "write_manifest",
]

_HARNESS = Path(__file__).with_name("harness.py")
_PLUGIN = "forge_factory_harness"
#: Levels of the curriculum the factory's tasks use (as the generated bank's).
LEVELS = (1, 2, 3, 4)


class FactoryError(RuntimeError):
    """A project the factory cannot build tasks from (its suite does not run, ...)."""


@dataclass
class BuildStats:
    """What one project's build did (the per-project row of docs/real_bank.md)."""

    project: str
    version: str
    tests: int = 0
    passing: int = 0
    flaky_or_failing: int = 0
    covered_functions: int = 0
    candidates: int = 0
    screened: int = 0
    killed: int = 0
    timeouts: int = 0
    equivalent: int = 0
    kept: int = 0
    confirmed: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    operators: dict[str, int] = field(default_factory=dict)

    @property
    def tasks_per_cpu_minute(self) -> float:
        return 60.0 * self.confirmed / self.cpu_seconds if self.cpu_seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tasks_per_cpu_minute"] = round(self.tasks_per_cpu_minute, 2)
        data["keep_share"] = round(self.confirmed / self.screened, 4) if self.screened else 0.0
        return data


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class PreparedProject:
    """A project read as repository mode reads it, with its test dependencies installed."""

    root: Path
    files: dict[str, str]
    layout: ProjectLayout
    requirements: tuple[str, ...]
    run: ProjectRun
    test_files: tuple[str, ...]


def _installed_pins(site: Path | None) -> list[str]:
    """``name==version`` of every distribution installed in ``site``."""
    if site is None or not site.is_dir():
        return []
    pins = []
    for info in site.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        if name and version:
            pins.append(f"{name}=={version}")
    return sorted(pins, key=str.lower)


def prepare_project(
    root: Path,
    *,
    requirements: Sequence[str] | None = None,
    extra_requirements: Sequence[str] = (),
    cache_dir: str | Path | None = None,
) -> PreparedProject:
    """Read the project at ``root`` (repository mode's reader and caps) and install its
    test dependencies: ``requirements`` when given (a manifest's pins), else what the
    project declares plus ``extra_requirements``; the returned ``requirements`` are the
    pins of what was installed, so a rebuild installs the same versions."""
    files, _skipped = read_project(root, max_file_bytes=MAX_FILE_BYTES, max_files=MAX_FILES)
    layout = project_layout(files)
    with phase("depenv"):
        if requirements is None:
            declared = [*declared_test_dependencies(files), *extra_requirements]
            site = ensure_environment(declared, cache_dir=cache_dir, base=root.resolve())
            pins = _installed_pins(site)
        else:
            pins = list(requirements)
            site = ensure_environment(pins, cache_dir=cache_dir, base=root.resolve())
    if site is not None:
        layout = layout.with_site_dirs([str(site)])
    tests = tuple(p for p in sorted(files) if layout.is_test_file(p))
    return PreparedProject(root, files, layout, tuple(pins), layout.run(), tests)


class _Runner:
    """Runs pytest on the host, with the trusted harness, in forgegym's interpreter (the
    sandbox's pytest) with the project's import roots and dependency environment."""

    def __init__(
        self, prepared: PreparedProject, python: str, timeout_s: float, work: Path
    ) -> None:
        self.root, self.python, self.timeout_s, self.work = (
            prepared.root,
            python,
            timeout_s,
            work,
        )
        self.prepared = prepared
        plugin_dir = work / "harness"
        plugin_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_HARNESS, plugin_dir / f"{_PLUGIN}.py")
        layout = prepared.layout
        roots = [str(self.root / p) for p in layout.import_paths]
        self.path = os.pathsep.join([str(plugin_dir), *roots, *layout.site_dirs])

    def _invoke(
        self,
        mode: str,
        args: Sequence[str],
        extra: dict[str, str] | None = None,
        request: Any = None,
    ) -> tuple[str, str]:
        """Run pytest in ``mode``; ``(answer file text, output tail)``."""
        out = Path(tempfile.mkstemp(dir=self.work, suffix=".json")[1])
        env = {
            **os.environ,
            "PYTHONPATH": self.path,
            "PYTHONHASHSEED": "0",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "FORGE_FACTORY_MODE": mode,
            "FORGE_FACTORY_OUT": str(out),
            "FORGE_FACTORY_SOURCE_ROOT": str(self.root),
            **(extra or {}),
        }
        env.pop("PYTEST_ADDOPTS", None)
        if request is not None:
            req = out.with_suffix(".in.json")
            req.write_text(json.dumps(request))
            env["FORGE_FACTORY_IN"] = str(req)
        layout = self.prepared.layout
        config = ["-c", layout.config_name] if layout.config_name else []
        cmd = [
            self.python,
            "-m",
            "pytest",
            *config,
            "-o",
            "addopts=",
            *layout.addopts,
            "-p",
            _PLUGIN,
            "-p",
            "no:cacheprovider",
            "-q",
            *args,
        ]
        try:
            proc = subprocess.run(
                cmd, cwd=self.root, env=env, capture_output=True, text=True, timeout=self.timeout_s
            )
            tail = f"exit {proc.returncode}: " + (proc.stdout + proc.stderr)[-800:]
        except subprocess.TimeoutExpired:
            tail = f"ran past {self.timeout_s}s"
        text = out.read_text() if out.exists() else ""
        out.unlink(missing_ok=True)
        return text, tail

    def pytest(
        self,
        mode: str,
        args: Sequence[str],
        extra: dict[str, str] | None = None,
        request: Any = None,
    ) -> dict[str, Any]:
        text, tail = self._invoke(mode, args, extra, request)
        if not text:
            raise FactoryError(f"pytest ({mode}) wrote no results ({tail})")
        return json.loads(text)

    def screen(
        self, mutants: list[dict[str, Any]], args: Sequence[str], test_timeout_s: float
    ) -> list[dict[str, Any]]:
        """The screen's answer lines (``{"started": id}`` and result records), as far as
        the process got."""
        text, _ = self._invoke(
            "screen",
            args,
            {"FORGE_FACTORY_TEST_TIMEOUT": str(test_timeout_s)},
            {"mutants": mutants, "first_failure": True},
        )
        lines = []
        for line in text.splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut by the process's end
        return lines


def _sandbox_job(
    prepared: PreparedProject, directory: Path, targets: Sequence[str], timeout_s: float
) -> PytestJob:
    # as RepoGrader's jobs: the project's configuration and conftest, a fixed hash seed
    return PytestJob(
        workdir=str(directory),
        targets=list(targets),
        timeout_s=timeout_s,
        project=prepared.run,
        conftest=True,
        python_hash_seed=0,
    )


def _run_sandbox(
    runner: Any,
    prepared: PreparedProject,
    variants: Sequence[tuple[dict[str, str], Sequence[str]]],
    timeout_s: float,
) -> list[PytestResult | None]:
    """Run each ``(changed files, targets)`` variant of the project in the sandbox (the
    runner's workers in parallel); each runs on its own materialised copy."""
    spaces = [Workspace(prepared.files, (), prefix="fg-factory-") for _ in variants]
    try:
        jobs = [
            _sandbox_job(prepared, space.materialise({}, dict(changed)), targets, timeout_s)
            for space, (changed, targets) in zip(spaces, variants, strict=True)
        ]
        results = runner.run_many(jobs)
    finally:
        for space in spaces:
            space.close()
    out = [r if isinstance(r, PytestResult) else None for r in results]
    # the sandbox's CPU (the pool's processes are not this process's waited-for children)
    _SANDBOX_CPU[0] += sum(r.cpu_s for r in out if r is not None)
    return out


_SANDBOX_CPU = [0.0]


def _sandbox_baseline(
    runner: Any, prepared: PreparedProject, timeout_s: float, say: Any
) -> tuple[set[str], set[str], dict[str, str], float]:
    """Tests that pass in the sandbox in two runs of every test file (each file alone)
    and in a run of the whole suite, the tests it collected, the files left out (path ->
    why) and the suite's wall time.

    Grading runs several files together (those of the fail-to-pass tests and those
    importing the changed module) and checks the ids it collects, so a file whose ids
    change with the files collected beside it (isodate's modules share a parameter list
    that grows at import) is left out, as is a test that passes alone but not in the
    suite."""
    passing: set[str] | None = None
    alone: dict[str, set[str]] = {}
    left_out: dict[str, str] = {}
    walls = [0.0, 0.0]
    for attempt in range(2):
        files = [f for f in prepared.test_files if f not in left_out]
        results = _run_sandbox(runner, prepared, [({}, [f]) for f in files], timeout_s)
        now: set[str] = set()
        for path, result in zip(files, results, strict=True):
            if result is None or result.status is not RunStatus.COMPLETED:
                status = "no result" if result is None else result.status.value
                detail = "" if result is None else result.detail
                # the runtime policy's refusal, when it was one, is the run's last line
                lines = [] if result is None else result.stderr_tail.strip().splitlines()
                why = f"{detail}; {lines[-1]}" if lines else detail
                left_out[path] = f"{status}: {why.strip()[:240]}"
                continue
            walls[attempt] += result.wall_s
            ids = set(result.collected_ids)
            if attempt and path in alone and ids != alone[path]:
                left_out[path] = "ids differ between two runs of the file alone"
                continue
            alone[path] = ids
            now |= {t for t, ok in result.verdicts.items() if ok}
        passing = now if passing is None else passing & now
    passing = passing or set()
    # the whole suite in one run, again after leaving files out (what one file collects
    # may depend on another's import): at most three rounds
    suite_timeout = max(timeout_s, 3.0 * max(walls) + 30.0)
    for _ in range(3):
        files = [f for f in prepared.test_files if f not in left_out]
        if len(files) < 2:
            break
        (whole,) = _run_sandbox(runner, prepared, [({}, files)], suite_timeout)
        if whole is None or whole.status is not RunStatus.COMPLETED:
            status = "no result" if whole is None else whole.status.value
            say(f"sandbox: the whole suite did not complete ({status}); files checked alone")
            break
        together: dict[str, set[str]] = {}
        for test_id in whole.collected_ids:
            together.setdefault(test_id.partition("::")[0], set()).add(test_id)
        moved = [f for f in files if together.get(f, set()) != alone.get(f, set())]
        for path in moved:
            left_out[path] = "its test ids change when the suite's other files are collected"
        passing &= {t for t, ok in whole.verdicts.items() if ok}
        if not moved:
            break
    say(f"sandbox: {len(passing)} tests pass twice; {len(left_out)} files left out")
    collected = {t for f, ids in alone.items() if f not in left_out for t in ids}
    passing = {t for t in passing if t.partition("::")[0] not in left_out}
    # the suite's time (every file, the slower run): a grading run may take several files
    return passing, collected, left_out, max(walls)


def _bare(node: cst.FunctionDef) -> str:
    """A definition's text without its decorators (what the screen compiles)."""
    return cst.Module(body=[node.with_changes(decorators=[], leading_lines=[])]).code


def _docstring(fn: cst.FunctionDef) -> str:
    doc = fn.get_docstring()
    return doc.strip().splitlines()[0] if doc else ""


def difficulty_level(features: dict[str, Any]) -> int:
    """Curriculum level 1-4 from the task's features: fewer failing tests, a subtle
    operator, a longer function and a test far from the function each make it harder."""
    score = 0
    score += features["n_fail"] <= 2
    score += features["operator"] in SUBTLE_OPERATORS
    score += features["function_lines"] > 15
    score += features["distance"] > 0
    return min(LEVELS[-1], 1 + score)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: ``id()`` values (a ``deepcopy`` memo in a traceback's locals): 14 digits and more
_OBJECT_ID = re.compile(r"(?<![\w.])\d{14,}(?![\w.])")


def _stable(text: str) -> str:
    """A failure's text without what differs from run to run (object addresses and ids):
    the report and the equivalence signature must not depend on the run."""
    return _OBJECT_ID.sub("<id>", _ADDRESS.sub(" at 0x...", text))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _report(project: str, path: str, function: str, doc: str, shown: dict[str, str]) -> str:
    parts = [
        f"Users of {project} report that `{function}` no longer behaves as documented"
        + (f' ("{doc}").' if doc else ".")
    ]
    parts.append("These tests fail:\n")
    for test_id, text in shown.items():
        parts.append(f"{test_id}\n```\n{text.strip()[-1200:]}\n```")
    parts.append(
        "Fix the code so they pass without breaking the tests that pass now. "
        "Other tests may check the same behaviour. The test files are read-only."
    )
    return "\n".join(parts)


def _is_test_id(test_id: str) -> bool:
    name = Path(test_id.split("::", 1)[0]).name
    return (
        "::" in test_id
        and name.endswith(".py")
        and (name.startswith("test_") or name.endswith("_test.py"))
    )


def _distance(source_path: str, test_id: str) -> int:
    stem = Path(source_path).stem
    test_file = Path(test_id.split("::", 1)[0]).stem
    return 0 if stem in test_file or test_file.removeprefix("test_") in stem else 1


def build_project(
    root: Path,
    *,
    project: str,
    version: str,
    sha256: str,
    python: str | None = None,
    seed: int = 0,
    max_candidates: int = 400,
    max_tasks: int = 250,
    max_per_function: int = 10,
    max_tests_per_mutant: int = 200,
    test_timeout_s: float = 5.0,
    suite_timeout_s: float = 1800.0,
    time_limit_cap_s: float = 120.0,
    pytest_args: Sequence[str] = (),
    extra_requirements: Sequence[str] = (),
    cache_dir: str | Path | None = None,
    runner: Any = None,
    work_dir: Path | None = None,
    log: Any = None,
) -> tuple[list[dict[str, Any]], BuildStats, dict[str, Any]]:
    """Build the validated tasks of the project unpacked at ``root`` (see the module doc).

    ``python`` is the host interpreter of the coverage and screen runs (default: this
    one, whose pytest is the sandbox's); ``runner`` the sandbox runner (default: the
    shared warm pool). ``root`` is never written. Returns the manifest entries (sorted by
    id), the build's statistics and the project record.
    """
    import sys

    from forgegym.sandbox.runners import get_default_runner

    say = log or (lambda message: None)
    stats = BuildStats(project=project, version=version)
    start = time.perf_counter()
    cpu_start = _children_cpu() + _self_cpu() + _SANDBOX_CPU[0]
    work = Path(work_dir or tempfile.mkdtemp(prefix="forge-factory-"))
    sandbox = runner or get_default_runner()
    prepared = prepare_project(root, extra_requirements=extra_requirements, cache_dir=cache_dir)
    if not prepared.test_files:
        raise FactoryError(f"{project}: no test file")
    say(f"{project}: {len(prepared.test_files)} test files; deps {list(prepared.requirements)}")
    sandbox_passing, sandbox_collected, left_out, suite_wall = _sandbox_baseline(
        sandbox, prepared, time_limit_cap_s, say
    )
    limit = time_limit(suite_wall, multiple=5.0, cap_s=time_limit_cap_s)
    host = _Runner(prepared, python or sys.executable, suite_timeout_s, work)
    args = [*pytest_args, *(f for f in prepared.test_files if f not in left_out)]
    traced = _traced_run(host, args, prepared, sha256, cache_dir)
    stats.tests = len(traced)
    passing = sorted(
        t for t, r in traced.items() if _is_test_id(t) and r["passed"] and t in sandbox_passing
    )
    stats.passing = len(passing)
    stats.flaky_or_failing = stats.tests - stats.passing
    say(
        f"{project}: {stats.tests} tests on the host, {stats.passing} pass there and in the sandbox"
    )
    if not passing:
        # the files left out say why, when every one was (a policy refusal, say)
        why = "; ".join(f"{path}: {reason}" for path, reason in sorted(left_out.items())[:2])
        raise FactoryError(
            f"{project}: no test passes reliably in the sandbox and on the host"
            + (f" ({len(left_out)} test files left out: {why})" if left_out else "")
        )
    covering: dict[str, list[str]] = {}
    for test_id in passing:
        for fn in traced[test_id].get("functions", []):
            covering.setdefault(fn, []).append(test_id)
    by_file: dict[str, set[str]] = {}
    for key in covering:
        path, _, name = key.partition("::")
        by_file.setdefault(path, set()).add(name)
    modules: dict[str, cst.Module] = {}
    candidates: list[tuple[str, Mutation]] = []
    for path in sorted(by_file):
        source = prepared.files.get(path)
        if source is None:
            continue
        try:
            mutations = enumerate_mutations(source, methods=True)
        except cst.ParserSyntaxError:
            continue
        # parsed once: a large module (more-itertools' is 190 KB) takes seconds to parse
        modules[path] = cst.parse_module(source)
        candidates += [(path, m) for m in mutations if m.function in by_file[path]]
    stats.covered_functions = len({(p, m.function) for p, m in candidates})
    stats.candidates = len(candidates)
    rng = random.Random(f"{seed}:{project}:{version}")
    rng.shuffle(candidates)
    requests: list[dict[str, Any]] = []
    meta: dict[str, tuple[str, Mutation, cst.FunctionDef]] = {}
    for path, mutation in candidates:
        if len(requests) >= max_candidates:
            break
        try:
            new_def = _bare(mutate_function(modules[path], mutation))
            original = function_node(modules[path], mutation.function)
        except (ValueError, KeyError):
            continue
        old_def = _bare(original)
        if new_def == old_def:
            continue
        ident = f"{path}::{mutation.function}:{mutation.operator}:{mutation.site}"
        tests = covering[f"{path}::{mutation.function}"][:max_tests_per_mutant]
        requests.append(
            {
                "id": ident,
                "file": path,
                "function": mutation.function,
                "source": new_def,
                "tests": tests,
            }
        )
        meta[ident] = (path, mutation, original)
    stats.screened = len(requests)
    say(f"{project}: screening {len(requests)} of {stats.candidates} candidates")
    results = _screen_all(host, requests, pytest_args, test_timeout_s, say, project)
    kept: list[dict[str, Any]] = []
    signatures: set[tuple[Any, ...]] = set()
    per_function: dict[str, int] = {}
    for result in results:
        if result["status"] == "timeout":
            stats.timeouts += 1
        if result["status"] != "ok" or not result["failing"]:
            continue
        stats.killed += 1
        path, mutation, original = meta[result["id"]]
        # the screen stops at the first failing test: mutants failing it the same way
        # are equivalent as far as the screen can tell (the sandbox's full failing set
        # deduplicates again after confirmation)
        ((first, text),) = result["failing"].items()
        text = _stable(text)
        signature = (path, first, _error_lines(text))
        if signature in signatures:
            stats.equivalent += 1
            continue
        key = f"{path}::{mutation.function}"
        if per_function.get(key, 0) >= max_per_function or len(kept) >= max_tasks:
            continue
        signatures.add(signature)
        per_function[key] = per_function.get(key, 0) + 1
        covering_files = sorted({t.split("::", 1)[0] for t in covering[key]})
        kept.append(
            {
                "path": path,
                "mutation": mutation,
                "original": original,
                "first": (first, text),
                "targets": covering_files,
            }
        )
    stats.kept = len(kept)
    say(f"{project}: {stats.killed} killed, {stats.equivalent} equivalent, {stats.kept} kept")
    entries, equivalent = _confirm_all(
        sandbox, prepared, kept, set(passing), modules, (project, version, sha256), limit
    )
    stats.equivalent += equivalent
    collected = sorted(sandbox_collected)
    for entry in entries:
        files = set(entry["modules"])
        entry["collected"] = [t for t in collected if t.split("::", 1)[0] in files]
        operator = entry["mutation"][1]
        stats.operators[operator] = stats.operators.get(operator, 0) + 1
    stats.confirmed = len(entries)
    # this process's, its host pytest runs' and the sandbox jobs' CPU since the start
    stats.cpu_seconds = round(_children_cpu() + _self_cpu() + _SANDBOX_CPU[0] - cpu_start, 2)
    stats.wall_seconds = round(time.perf_counter() - start, 2)
    say(f"{project}: {stats.confirmed} confirmed; {stats.tasks_per_cpu_minute:.1f} tasks/CPU-min")
    if work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    record = {
        "project": project,
        "version": version,
        "sha256": sha256,
        "requirements": list(prepared.requirements),
        "passing": passing,
        "collected": sorted(sandbox_collected),
        "left_out": dict(sorted(left_out.items())),
        "time_limit_s": limit,
        "seed": seed,
        # what decides the manifest besides the pins and the seed: a rebuild with these
        # gives the same files
        "options": {
            "max_candidates": max_candidates,
            "max_tasks": max_tasks,
            "max_per_function": max_per_function,
            "max_tests_per_mutant": max_tests_per_mutant,
            "test_timeout_s": test_timeout_s,
            "time_limit_cap_s": time_limit_cap_s,
            "extra_requirements": list(extra_requirements),
        },
    }
    return sorted(entries, key=lambda e: e["id"]), stats, record


def _traced_run(
    host: _Runner,
    args: list[str],
    prepared: PreparedProject,
    sha256: str,
    cache_dir: str | Path | None,
) -> dict[str, Any]:
    """The coverage run's per-test records, cached by everything that decides them (the
    sdist, the pins, the files run, the harness): the traced run is a build's largest
    fixed cost (minutes for more-itertools) and a rebuild with other caps reuses it."""
    from forgegym.tasklib.depenv import cache_root

    key = hashlib.sha256(
        json.dumps([sha256, list(prepared.requirements), args, _HARNESS.read_text()]).encode()
    ).hexdigest()[:24]
    path = cache_root(cache_dir) / "factory" / f"traced-{key}.json"
    if sha256 and path.is_file():
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    traced: dict[str, Any] = host.pytest("baseline", args, {"FORGE_FACTORY_TRACE": "1"})["tests"]
    if sha256:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(f".tmp{os.getpid()}")
        scratch.write_text(json.dumps(traced))
        os.replace(scratch, path)
    return traced


def _error_lines(text: str) -> str:
    """A failure's ``E`` lines (the assertion and its values), else its last line: what
    tells two mutants' failures of the same test apart."""
    lines = [line.strip() for line in text.splitlines() if line.startswith("E ")]
    return "\n".join(lines)[:400] if lines else _last_line(text)


def _screen_all(
    host: _Runner,
    requests: list[dict[str, Any]],
    pytest_args: Sequence[str],
    test_timeout_s: float,
    say: Any,
    project: str,
) -> list[dict[str, Any]]:
    """Screen every request, 200 per process; a process that ends early (a mutant stuck
    in C code, its memory cap) keeps its finished results, the mutant it was on counts
    as timed out, and the rest go to a new process."""
    results: list[dict[str, Any]] = []
    pending = list(requests)
    while pending:
        part = pending[:200]
        lines = host.screen(part, pytest_args, test_timeout_s)
        finished = {r["id"]: r for r in lines if "status" in r}
        started = [r["started"] for r in lines if "started" in r]
        done = 0
        for request in part:
            if request["id"] in finished:
                results.append(finished[request["id"]])
                done += 1
            elif started and request["id"] == started[-1]:
                say(f"{project}: {request['id']} ended its screen process; counted as timed out")
                results.append({"id": request["id"], "failing": {}, "status": "timeout"})
                done += 1
                break
            else:
                break
        if done == 0:
            # the process wrote nothing (it did not start): drop the chunk, say why
            say(f"{project}: a screen process gave no result; {len(part)} mutants dropped")
            done = len(part)
        pending = pending[done:]
    return results


def _confirm_all(
    sandbox: Any,
    prepared: PreparedProject,
    kept: list[dict[str, Any]],
    passing: set[str],
    modules: dict[str, cst.Module],
    pin: tuple[str, str, str],
    limit: float,
) -> tuple[list[dict[str, Any]], int]:
    """Run every kept mutant's covering test files in the sandbox, as grading runs them
    (in batches through the runner's workers). Fail-to-pass: the tests passing at build
    that fail; the run must complete and fail at least one. Returns the entries and how
    many were equivalent to an earlier one (same failing tests, same messages)."""
    entries: list[dict[str, Any]] = []
    signatures: set[tuple[Any, ...]] = set()
    equivalent = 0
    batch = 16
    for i in range(0, len(kept), batch):
        part = kept[i : i + batch]
        variants = [
            (
                {k["path"]: apply_to_module(modules[k["path"]], [k["mutation"]]).code},
                k["targets"],
            )
            for k in part
        ]
        results = _run_sandbox(sandbox, prepared, variants, limit)
        for item, result in zip(part, results, strict=True):
            if result is None or result.status is not RunStatus.COMPLETED:
                continue
            verdicts = result.verdicts
            f2p = sorted(t for t, ok in verdicts.items() if not ok and t in passing)
            if not f2p:
                continue
            messages = {r.nodeid: _stable(r.message)[:300] for r in result.records}
            signature = (item["path"], tuple((t, messages.get(t, "")) for t in f2p))
            if signature in signatures:
                equivalent += 1
                continue
            signatures.add(signature)
            files = sorted({t.split("::", 1)[0] for t in f2p})
            p2p = [t for t in sorted(passing) if t.split("::", 1)[0] in files and t not in f2p]
            first, text = item["first"]
            shown = {first: text} if first in f2p else {f2p[0]: messages.get(f2p[0], "")}
            entries.append(_entry(item, f2p, p2p, files, *pin, shown))
    return entries, equivalent


def _entry(
    item: dict[str, Any],
    f2p: list[str],
    p2p: list[str],
    modules: list[str],
    project: str,
    version: str,
    sha256: str,
    shown: dict[str, str],
) -> dict[str, Any]:
    path, mutation = item["path"], item["mutation"]
    original: cst.FunctionDef = item["original"]
    fn_lines = len(cst.Module(body=[original]).code.strip().splitlines())
    features = {
        "n_fail": len(f2p),
        "operator": mutation.operator,
        "function_lines": fn_lines,
        "distance": min(_distance(path, t) for t in f2p),
    }
    ident = (
        f"real/{project}/{version}/{path}::{mutation.function}:{mutation.operator}:{mutation.site}"
    )
    return {
        "id": ident,
        "project": project,
        "version": version,
        "sha256": sha256,
        "file": path,
        "mutation": mutation.to_json(),
        "shown": sorted(shown),
        "f2p": f2p,
        "p2p": p2p,
        "report": _report(project, path, mutation.function, _docstring(original), shown),
        "features": features,
        "modules": modules,
        "level": difficulty_level(features),
    }


def write_manifest(path: Path, entries: Sequence[dict[str, Any]]) -> None:
    """JSON lines (gzip when ``path`` ends in ``.gz``, with a fixed mtime: reproducible)."""
    data = "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        with (
            path.open("wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out,
        ):
            out.write(data)
    else:
        path.write_bytes(data)


def read_manifest(path: Path) -> list[dict[str, Any]]:
    """The entries of a manifest written by :func:`write_manifest`."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def build_pinned(
    name: str,
    version: str,
    out_dir: Path,
    *,
    python: str | None = None,
    cache_dir: Path | None = None,
    sha256: str | None = None,
    seed: int = 0,
    log: Any = None,
    **options: Any,
) -> BuildStats:
    """Fetch (or find) the pinned sdist, unpack it into a scratch folder, build its tasks
    and write ``out_dir/<name>-<version>.jsonl.gz``, ``.project.json`` and ``.stats.json``."""
    from forgegym.tasklib.factory.source import fetch_sdist, unpack_sdist

    sdist, digest = fetch_sdist(name, version, cache_dir, sha256=sha256)
    with tempfile.TemporaryDirectory(prefix="forge-factory-src-") as scratch:
        root = unpack_sdist(sdist, Path(scratch))
        entries, stats, record = build_project(
            root,
            project=name,
            version=version,
            sha256=digest,
            python=python,
            seed=seed,
            log=log,
            **options,
        )
    write_bank_files(out_dir, entries, stats, record, sdist=sdist.name)
    return stats


def write_bank_files(
    out_dir: Path,
    entries: Sequence[dict[str, Any]],
    stats: BuildStats,
    record: dict[str, Any],
    *,
    sdist: str = "",
) -> None:
    """A project's three bank files: manifest, project record, build statistics."""
    name, version = record["project"], record["version"]
    out_dir.mkdir(parents=True, exist_ok=True)
    write_manifest(out_dir / f"{name}-{version}.jsonl.gz", entries)
    (out_dir / f"{name}-{version}.project.json").write_text(
        json.dumps(record, indent=1, sort_keys=True) + "\n"
    )
    (out_dir / f"{name}-{version}.stats.json").write_text(
        json.dumps(
            {**stats.to_json(), "sha256": record["sha256"], "seed": record["seed"], "sdist": sdist},
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )


def read_project_record(folder: Path, project: str, version: str) -> dict[str, Any]:
    """The ``<project>-<version>.project.json`` record written beside its manifest."""
    path = folder / f"{project}-{version}.project.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the project record of {project}=={version} is missing")
    return json.loads(path.read_text())


def stats_table(out_dir: Path) -> str:
    """The per-project Markdown table of a bank folder's ``*.stats.json`` files."""
    rows = [
        "| project | version | tests passing (sandbox twice, host) | covered functions | screened | "
        "killed | equivalent | timeouts | confirmed tasks | keep share | CPU s | "
        "tasks / CPU-min |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    total_tasks = total_cpu = 0.0
    for path in sorted(out_dir.glob("*.stats.json")):
        s = json.loads(path.read_text())
        total_tasks += s["confirmed"]
        total_cpu += s["cpu_seconds"]
        rows.append(
            f"| {s['project']} | {s['version']} | {s['passing']}/{s['tests']} | "
            f"{s['covered_functions']} | {s['screened']} | {s['killed']} | {s['equivalent']} | "
            f"{s['timeouts']} | {s['confirmed']} | {s['keep_share']:.0%} | "
            f"{s['cpu_seconds']:.0f} | {s['tasks_per_cpu_minute']:.1f} |"
        )
    rate = 60 * total_tasks / total_cpu if total_cpu else 0.0
    rows.append(
        f"| **all** | | | | | | | | **{int(total_tasks)}** | | {total_cpu:.0f} | {rate:.1f} |"
    )
    return "\n".join(rows) + "\n"
