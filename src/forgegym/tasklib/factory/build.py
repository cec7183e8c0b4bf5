"""The real-code task factory: a pinned project -> a manifest of validated Bugfix tasks.

One project's build (:func:`build_project`):

1. **baseline**: the suite runs twice in the project's interpreter through the trusted
   harness (:mod:`forgegym.tasklib.factory.harness`), once tracing which top-level source
   functions each test calls, once untraced; a test kept as *passing* passed both times
   (the rerun drops flaky tests and any test the tracing changes);
2. **candidates**: every site of every mutation operator (:mod:`forgegym.tasklib.mutations`)
   in the covered top-level functions, shuffled by ``seed`` and capped;
3. **screen**: one process screens every candidate by swapping the live function's code
   for the mutant's and running only the tests that cover the function; a candidate is
   kept when it compiles, fails at least one test, never times out, and its failing-test
   signature and failure outputs differ from every kept mutant's (equivalent mutants are
   deduplicated);
4. **confirm**: each kept mutant is written into the real file and its fail-to-pass and
   pass-to-pass tests run in a fresh process: every fail-to-pass test must fail and every
   pass-to-pass test pass (this catches import-time effects the screen cannot see);
5. **manifest**: one JSON line per task: project, version, sha256, file, mutation,
   fail-to-pass (shown and hidden), pass-to-pass, the bug report, difficulty features and
   level. No source text: tasks materialise from the cached sdist.

Every choice is seeded and every list sorted, so the same pins and seed give the same
manifest (the screen's verdicts are deterministic for deterministic suites; the build
keeps only tests that passed twice).
"""

from __future__ import annotations

import gzip
import json
import os
import random
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

from forgegym.tasklib.mutations import (
    SUBTLE_OPERATORS,
    Mutation,
    apply_mutations,
    enumerate_mutations,
)

__all__ = [
    "BuildStats",
    "FactoryError",
    "build_pinned",
    "build_project",
    "difficulty_level",
    "read_manifest",
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


def import_root(root: Path) -> Path:
    """``src/`` for a src layout, else the project root."""
    return root / "src" if (root / "src").is_dir() else root


class _Runner:
    """Runs pytest in the project's interpreter with the trusted harness."""

    def __init__(self, root: Path, python: str, timeout_s: float, work: Path) -> None:
        self.root, self.python, self.timeout_s, self.work = root, python, timeout_s, work
        plugin_dir = work / "harness"
        plugin_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_HARNESS, plugin_dir / f"{_PLUGIN}.py")
        self.path = os.pathsep.join([str(plugin_dir), str(import_root(root))])

    def pytest(
        self,
        mode: str,
        args: Sequence[str],
        extra: dict[str, str] | None = None,
        request: Any = None,
    ) -> dict[str, Any]:
        out = Path(tempfile.mkstemp(dir=self.work, suffix=".json")[1])
        env = {
            **os.environ,
            "PYTHONPATH": self.path,
            "PYTHONHASHSEED": "0",
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
        cmd = [
            self.python,
            "-m",
            "pytest",
            "-p",
            _PLUGIN,
            "-p",
            "no:cacheprovider",
            "-q",
            "-p",
            "no:randomly",
            *args,
        ]
        try:
            proc = subprocess.run(
                cmd, cwd=self.root, env=env, capture_output=True, text=True, timeout=self.timeout_s
            )
        except subprocess.TimeoutExpired as exc:
            raise FactoryError(f"pytest ({mode}) ran past {self.timeout_s}s") from exc
        text = out.read_text() if out.exists() else ""
        out.unlink(missing_ok=True)
        if not text:
            tail = (proc.stdout + proc.stderr)[-800:]
            raise FactoryError(f"pytest ({mode}) wrote no results (exit {proc.returncode}): {tail}")
        return json.loads(text)


def _function_source(module_source: str, name: str) -> tuple[str, cst.FunctionDef]:
    module = cst.parse_module(module_source)
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            bare = stmt.with_changes(decorators=[], leading_lines=[])
            return module.code_for_node(bare), stmt
    raise KeyError(name)


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
    python: str,
    seed: int = 0,
    max_candidates: int = 400,
    max_tasks: int = 250,
    max_per_function: int = 4,
    max_tests_per_mutant: int = 200,
    test_timeout_s: float = 5.0,
    suite_timeout_s: float = 1800.0,
    pytest_args: Sequence[str] = (),
    workers: int = 2,
    work_dir: Path | None = None,
    log: Any = None,
) -> tuple[list[dict[str, Any]], BuildStats]:
    """Build the validated tasks of the project unpacked at ``root`` (see the module doc).

    ``python`` is the interpreter of the project's prepared environment (pytest, its
    runtime and test dependencies). ``root`` is restored to its pristine sources before
    returning. Returns the manifest entries (sorted by id) and the build's statistics.
    """
    say = log or (lambda message: None)
    stats = BuildStats(project=project, version=version)
    start = time.perf_counter()
    cpu_start = _children_cpu()
    work = Path(work_dir or tempfile.mkdtemp(prefix="forge-factory-"))
    runner = _Runner(root, python, suite_timeout_s, work)
    args = list(pytest_args)
    traced = runner.pytest("baseline", args, {"FORGE_FACTORY_TRACE": "1"})["tests"]
    plain = runner.pytest("baseline", args)["tests"]
    stats.tests = len(plain)
    # only tests of test files (doctests and the like are not graded by the sandbox's
    # trusted pytest configuration)
    plain = {t: r for t, r in plain.items() if _is_test_id(t)}
    passing = sorted(t for t, r in traced.items() if r["passed"] and plain.get(t, {}).get("passed"))
    stats.passing = len(passing)
    stats.flaky_or_failing = stats.tests - stats.passing
    say(f"{project}: {stats.tests} tests, {stats.passing} pass twice")
    if not passing:
        raise FactoryError(f"{project}: no test passes reliably")
    covering: dict[str, list[str]] = {}
    for test_id in passing:
        for fn in traced[test_id].get("functions", []):
            covering.setdefault(fn, []).append(test_id)
    by_file: dict[str, set[str]] = {}
    for key in covering:
        path, _, name = key.partition("::")
        by_file.setdefault(path, set()).add(name)
    sources: dict[str, str] = {}
    candidates: list[tuple[str, Mutation]] = []
    for path in sorted(by_file):
        try:
            source = (root / path).read_text(encoding="utf-8")
            mutations = enumerate_mutations(source)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
            continue
        sources[path] = source
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
            mutated = apply_mutations(sources[path], [mutation])
            new_def, _ = _function_source(mutated, mutation.function)
            old_def, original = _function_source(sources[path], mutation.function)
        except (ValueError, KeyError, cst.ParserSyntaxError):
            continue
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
    results: list[dict[str, Any]] = []
    chunk = 100
    for i in range(0, len(requests), chunk):
        part = requests[i : i + chunk]
        try:
            results += runner.pytest(
                "screen",
                args,
                {"FORGE_FACTORY_TEST_TIMEOUT": str(test_timeout_s)},
                {"mutants": part},
            )["results"]
        except FactoryError as exc:
            say(f"{project}: a screen chunk failed ({exc}); its mutants are dropped")
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
        signature = (path, tuple(sorted((t, _last_line(x)) for t, x in result["failing"].items())))
        if signature in signatures:
            stats.equivalent += 1
            continue
        key = f"{path}::{mutation.function}"
        if per_function.get(key, 0) >= max_per_function or len(kept) >= max_tasks:
            continue
        signatures.add(signature)
        per_function[key] = per_function.get(key, 0) + 1
        kept.append({**result, "path": path, "mutation": mutation, "original": original})
    stats.kept = len(kept)
    say(f"{project}: {stats.killed} killed, {stats.equivalent} equivalent, {stats.kept} kept")
    entries = _confirm_all(
        root, runner, kept, passing, sources, (project, version, sha256), rng, args, workers
    )
    for entry in entries:
        entry["collected"] = sorted(t for t in plain if t.split("::", 1)[0] in entry["modules"])
        operator = entry["mutation"][1]
        stats.operators[operator] = stats.operators.get(operator, 0) + 1
    stats.confirmed = len(entries)
    # every child of this process since the start is one of this build's pytest runs
    stats.cpu_seconds = round(_children_cpu() - cpu_start, 2)
    stats.wall_seconds = round(time.perf_counter() - start, 2)
    say(f"{project}: {stats.confirmed} confirmed; {stats.tasks_per_cpu_minute:.1f} tasks/CPU-min")
    if work_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return sorted(entries, key=lambda e: e["id"]), stats


def _confirm_all(
    root: Path,
    runner: _Runner,
    kept: list[dict[str, Any]],
    passing: list[str],
    sources: dict[str, str],
    pin: tuple[str, str, str],
    rng: random.Random,
    args: list[str],
    workers: int,
) -> list[dict[str, Any]]:
    """Confirm every kept mutant in the real file, ``workers`` at a time (each worker on
    its own copy of the project, so their file writes never meet). The shown tests are
    drawn in ``kept``'s order before any run: the result does not depend on timing."""
    from concurrent.futures import ThreadPoolExecutor

    shown = [
        sorted(rng.sample(sorted(k["failing"]), 1 if len(k["failing"]) < 4 else 2)) for k in kept
    ]
    roots = [root]
    for i in range(1, max(1, workers)):
        copy = runner.work / f"copy{i}"
        shutil.copytree(root, copy, symlinks=True)
        roots.append(copy)
    runners = [runner] + [
        _Runner(r, runner.python, runner.timeout_s, runner.work / f"w{i}")
        for i, r in enumerate(roots[1:], 1)
    ]

    def work(index: int) -> list[tuple[int, dict[str, Any] | None]]:
        mine = range(index, len(kept), len(roots))
        return [
            (
                i,
                _confirm(
                    roots[index], runners[index], kept[i], passing, sources, *pin, shown[i], args
                ),
            )
            for i in mine
        ]

    with ThreadPoolExecutor(len(roots)) as pool:
        done = [pair for part in pool.map(work, range(len(roots))) for pair in part]
    return [entry for _, entry in sorted(done, key=lambda p: p[0]) if entry is not None]


def _confirm(
    root: Path,
    runner: _Runner,
    item: dict[str, Any],
    passing: list[str],
    sources: dict[str, str],
    project: str,
    version: str,
    sha256: str,
    shown_ids: list[str],
    args: list[str],
) -> dict[str, Any] | None:
    path, mutation = item["path"], item["mutation"]
    f2p = sorted(item["failing"])
    modules = {t.split("::", 1)[0] for t in f2p}
    p2p = [t for t in passing if t.split("::", 1)[0] in modules and t not in item["failing"]]
    target = root / path
    target.write_text(apply_mutations(sources[path], [mutation]), encoding="utf-8")
    try:
        outcome = runner.pytest("baseline", [*args, *f2p, *p2p])["tests"]
    except FactoryError:
        return None
    finally:
        target.write_text(sources[path], encoding="utf-8")
    if any(outcome.get(t, {}).get("passed", True) for t in f2p):
        return None
    if not all(outcome.get(t, {}).get("passed") for t in p2p):
        return None
    shown = {t: item["failing"][t] for t in shown_ids}
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
        "shown": shown_ids,
        "f2p": f2p,
        "p2p": p2p,
        "report": _report(project, path, mutation.function, _docstring(original), shown),
        "features": features,
        "modules": sorted(modules),
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
    python: str,
    cache_dir: Path | None = None,
    sha256: str | None = None,
    seed: int = 0,
    log: Any = None,
    **options: Any,
) -> BuildStats:
    """Fetch (or find) the pinned sdist, unpack it into a scratch folder, build its tasks
    and write ``out_dir/<name>-<version>.jsonl.gz`` and ``...stats.json``."""
    from forgegym.tasklib.factory.source import fetch_sdist, unpack_sdist

    sdist, digest = fetch_sdist(name, version, cache_dir, sha256=sha256)
    with tempfile.TemporaryDirectory(prefix="forge-factory-src-") as scratch:
        root = unpack_sdist(sdist, Path(scratch))
        entries, stats = build_project(
            root,
            project=name,
            version=version,
            sha256=digest,
            python=python,
            seed=seed,
            log=log,
            **options,
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    write_manifest(out_dir / f"{name}-{version}.jsonl.gz", entries)
    (out_dir / f"{name}-{version}.stats.json").write_text(
        json.dumps(
            {**stats.to_json(), "sha256": digest, "seed": seed, "sdist": sdist.name},
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    return stats


def stats_table(out_dir: Path) -> str:
    """The per-project Markdown table of a bank folder's ``*.stats.json`` files."""
    rows = [
        "| project | version | tests passing twice | covered functions | screened | "
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
