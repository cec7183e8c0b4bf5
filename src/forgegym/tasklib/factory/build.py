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

import random
import shutil
import tempfile
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import libcst as cst

from forgegym.sandbox.jobs import RunStatus
from forgegym.tasklib.agreement import time_limit
from forgegym.tasklib.factory.manifest import (
    LEVELS,
    BuildStats,
    _bare,
    _entry,
    _error_lines,
    _is_test_id,
    _stable,
    difficulty_level,
    grading_time_limit,
    read_manifest,
    read_project_record,
    sdist_licence,
    stats_table,
    write_bank_files,
    write_manifest,
)
from forgegym.tasklib.factory.prepare import FactoryError, PreparedProject, prepare_project
from forgegym.tasklib.factory.runs import (
    _run_sandbox,
    _Runner,
    _sandbox_baseline,
    _screen_all,
    _traced_run,
    cpu_seconds,
)
from forgegym.tasklib.mutations import (
    Mutation,
    apply_to_module,
    enumerate_mutations,
    function_node,
    mutate_function,
)
from forgegym.tasklib.project import graded_test_files, imports_of_tests

__all__ = [
    "LEVELS",
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
    private_targets: bool = True,
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
    cpu_start = cpu_seconds()
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
    passing, covering = _passing_tests(traced, sandbox_passing, left_out, stats, say)
    modules, candidates = _candidates(prepared, covering, private_targets)
    stats.covered_functions = len({(p, m.function) for p, m in candidates})
    stats.candidates = len(candidates)
    rng = random.Random(f"{seed}:{project}:{version}")
    rng.shuffle(candidates)
    requests, meta = _screen_requests(
        candidates, modules, covering, max_candidates, max_tests_per_mutant
    )
    stats.screened = len(requests)
    say(f"{project}: screening {len(requests)} of {stats.candidates} candidates")
    results = _screen_all(host, requests, pytest_args, test_timeout_s, say, project)
    kept = _keep_screened(results, meta, covering, stats, max_per_function, max_tasks)
    stats.kept = len(kept)
    say(f"{project}: {stats.killed} killed, {stats.equivalent} equivalent, {stats.kept} kept")
    entries, equivalent = _confirm_all(
        sandbox, prepared, kept, set(passing), modules, (project, version, sha256), limit
    )
    stats.equivalent += equivalent
    entries, refused = _confirm_references(sandbox, prepared, entries, limit, passing, left_out)
    stats.reference_refused = len(refused)
    if refused:
        say(f"{project}: {len(refused)} tasks dropped: their reference fails under grading's trust")
    _add_collected(entries, sandbox_collected, stats)
    stats.cpu_seconds = round(cpu_seconds() - cpu_start, 2)
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
        "licence": sdist_licence(root),
        "seed": seed,
        # what decides the manifest besides the pins and the seed: a rebuild with these
        # gives the same files
        "options": {
            "max_candidates": max_candidates,
            "max_tasks": max_tasks,
            "max_per_function": max_per_function,
            "max_tests_per_mutant": max_tests_per_mutant,
            "private_targets": private_targets,
            "test_timeout_s": test_timeout_s,
            "time_limit_cap_s": time_limit_cap_s,
            "extra_requirements": list(extra_requirements),
        },
    }
    if refused:
        record["references_refused"] = dict(sorted(refused.items()))
    return sorted(entries, key=lambda e: e["id"]), stats, record


def _passing_tests(
    traced: dict[str, dict[str, Any]],
    sandbox_passing: set[str],
    left_out: dict[str, str],
    stats: BuildStats,
    say: Any,
) -> tuple[list[str], dict[str, list[str]]]:
    """The tests that pass on the host and in the sandbox, and for each covered function
    the passing tests that call it; a :class:`FactoryError` when none passes."""
    project = stats.project
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
    return passing, covering


def _add_collected(
    entries: list[dict[str, Any]], sandbox_collected: set[str], stats: BuildStats
) -> None:
    """Give each confirmed entry the ids the sandbox collects from its test files, and
    count the entries per operator."""
    collected = sorted(sandbox_collected)
    for entry in entries:
        files = set(entry["modules"])
        entry["collected"] = [t for t in collected if t.split("::", 1)[0] in files]
        operator = entry["mutation"][1]
        stats.operators[operator] = stats.operators.get(operator, 0) + 1
    stats.confirmed = len(entries)


def _candidates(
    prepared: PreparedProject, covering: dict[str, list[str]], private: bool = True
) -> tuple[dict[str, cst.Module], list[tuple[str, Mutation]]]:
    """Every mutation site in the functions and methods the passing tests cover (sorted
    by file, in each file's site order), and each such file parsed once. ``private``:
    private helpers and methods the tests cover are targets too (an evaluator whose
    logic lives in ``_eval_*`` methods; issue 39)."""
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
            mutations = enumerate_mutations(source, methods=True, private=private)
        except cst.ParserSyntaxError:
            continue
        # parsed once: a large module (more-itertools' is 190 KB) takes seconds to parse
        modules[path] = cst.parse_module(source)
        candidates += [(path, m) for m in mutations if m.function in by_file[path]]
    return modules, candidates


def _screen_requests(
    candidates: list[tuple[str, Mutation]],
    modules: dict[str, cst.Module],
    covering: dict[str, list[str]],
    max_candidates: int,
    max_tests_per_mutant: int,
) -> tuple[list[dict[str, Any]], dict[str, tuple[str, Mutation, cst.FunctionDef]]]:
    """The screen's requests (the first ``max_candidates`` candidates that change their
    function's code, each with the tests covering it) and, by request id, the file,
    mutation and original definition of each."""
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
    return requests, meta


def _keep_screened(
    results: list[dict[str, Any]],
    meta: dict[str, tuple[str, Mutation, cst.FunctionDef]],
    covering: dict[str, list[str]],
    stats: BuildStats,
    max_per_function: int,
    max_tasks: int,
) -> list[dict[str, Any]]:
    """The screened mutants to confirm in the sandbox: killed, not equivalent to one kept
    before, within the caps per function and per project (``stats`` counts them)."""
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
    return kept


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


def _confirm_references(
    sandbox: Any,
    prepared: PreparedProject,
    entries: list[dict[str, Any]],
    limit: float,
    passing: Sequence[str],
    left_out: Collection[str] = (),
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Keep the entries whose reference (the pristine file) passes when run as grading
    runs an agent's fix: the task starts from the mutant, so the restored file is changed
    code, untrusted (design note 004, D9). The confirmation above ran each mutant trusted
    and never saw this: croniter's and pyparsing's modules did at import what changed
    code could not.

    The files run are grading's own selection (:func:`~forgegym.tasklib.project.
    graded_test_files`: the fail-to-pass tests' files and every visible test file, those
    not ``left_out``, importing the mutated module), not the entry's covering files: a
    check of the covering files alone passed markdown references that crash when graded
    (``BlockQuoteProcessor.test``, in a file that imports the module without covering the
    function). A reference passes when every fail-to-pass test and every test of
    ``passing`` in those files (less the entry's ``excluded``) passes, as grading asks.
    One run per mutated file and set of files (tasks that share both share the run),
    under grading's limit for that many files. A run that times out or gives no result
    decides nothing (a loaded host): its tasks are kept, as the mutant's own confirmation
    ran them. Returns the kept entries and, by id, why each other one failed."""
    visible = [p for p in prepared.test_files if p not in set(left_out)]
    imports = imports_of_tests(prepared.files, prepared.layout.import_paths, visible)
    groups: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = {}
    for entry in entries:
        files = graded_test_files(visible, entry["f2p"], [entry["file"]], imports)
        groups.setdefault((entry["file"], tuple(files)), []).append(entry)
    keys = sorted(groups)
    variants: list[tuple[dict[str, str], list[str]]] = [({}, list(k[1])) for k in keys]
    files_run = max((len(targets) for _, targets in variants), default=1)
    results = _run_sandbox(
        sandbox,
        prepared,
        variants,
        grading_time_limit(limit, files_run),
        untrusted=[[k[0]] for k in keys],
    )
    refused: dict[str, str] = {}
    for key, result in zip(keys, results, strict=True):
        if result is None or result.status is RunStatus.TIMEOUT:
            continue
        verdicts = result.verdicts
        graded = set(key[1])
        for entry in groups[key]:
            excluded = set(entry.get("excluded", ()))
            checked = [*entry["f2p"], *(t for t in passing if t.partition("::")[0] in graded)]
            failing = [
                t for t in dict.fromkeys(checked) if t not in excluded and not verdicts.get(t)
            ]
            if result.status is not RunStatus.COMPLETED:
                lines = result.stderr_tail.strip().splitlines()
                last = lines[-1] if lines else result.detail
                refused[entry["id"]] = f"{result.status.value}: {last.strip()[:240]}"
            elif failing:
                refused[entry["id"]] = f"{len(failing)} tests fail, first {failing[0]}"
    return [e for e in entries if e["id"] not in refused], refused


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
    if cache_dir is not None:
        # The bank remembers where its sdists are: loading it later (serving it offline)
        # looks there before the default cache (issue 39).
        record = {**record, "sdist_cache": str(Path(cache_dir).expanduser().absolute())}
    write_bank_files(out_dir, entries, stats, record, sdist=sdist.name)
    return stats
