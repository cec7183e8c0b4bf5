"""How a build runs a project's tests: in the sandbox as grading runs them (the
baseline, the confirmation of mutants) and on the host through the trusted harness (the
coverage run, the screen), with the CPU both spend."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from forgegym.sandbox.atomic import write_atomic
from forgegym.sandbox.jobs import PytestJob, PytestResult, RunStatus, pristine_manifest
from forgegym.sandbox.workspace import Workspace
from forgegym.tasklib.factory.prepare import FactoryError, PreparedProject

_HARNESS = Path(__file__).with_name("harness.py")
_PROBE = Path(__file__).parents[1] / "probe.py"
_PLUGIN = "forge_factory_harness"
#: CPU seconds of every sandbox job a build in this process ran
_SANDBOX_CPU = [0.0]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_seconds() -> float:
    """The CPU a build has spent so far: this process's, its host pytest runs' and the
    sandbox jobs' (the pool's processes are not this process's waited-for children)."""
    return _children_cpu() + _self_cpu() + _SANDBOX_CPU[0]


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
        shutil.copyfile(_PROBE, plugin_dir / "forge_probe.py")  # the recorder's encoder
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
    prepared: PreparedProject,
    directory: Path,
    targets: Sequence[str],
    timeout_s: float,
    changed: Mapping[str, str] | None = None,
    trusted: Mapping[str, str] | None = None,
    untrusted: Sequence[str] = (),
) -> PytestJob:
    # as RepoGrader's jobs: the project's configuration and conftest, a fixed hash seed,
    # and every file (the project and the factory's own mutant) pristine: trusted code;
    # ``trusted``: the changed files the run trusts instead (grading trusts a task's
    # starting files, so a module the agent restores is changed code: issue 39);
    # ``untrusted``: files left out of the manifest, as grading sees what an agent changed
    starting = changed if trusted is None else trusted
    manifest = pristine_manifest({**prepared.files, **dict(starting or {})}, prepared.data_files)
    for path in untrusted:
        manifest.pop(path, None)
    return PytestJob(
        workdir=str(directory),
        targets=list(targets),
        timeout_s=timeout_s,
        project=prepared.run,
        conftest=True,
        python_hash_seed=0,
        pristine=manifest,
    )


def _run_sandbox(
    runner: Any,
    prepared: PreparedProject,
    variants: Sequence[tuple[dict[str, str], Sequence[str]]],
    timeout_s: float,
    trusted: Sequence[Mapping[str, str]] | None = None,
    untrusted: Sequence[Sequence[str]] | None = None,
) -> list[PytestResult | None]:
    """Run each ``(changed files, targets)`` variant of the project in the sandbox (the
    runner's workers in parallel); each runs on its own materialised copy. ``trusted``
    (one per variant): the changed files its run trusts in place of its own (default:
    the variant's files, every file trusted); ``untrusted`` (one per variant): files run
    as changed code, not pristine (grading's trust)."""
    untrusted = list(untrusted) if untrusted is not None else [() for _ in variants]
    spaces = [
        Workspace(prepared.files, (), prefix="fg-factory-", data_files=prepared.data_files)
        for _ in variants
    ]
    starts: Sequence[Mapping[str, str] | None] = (
        [None] * len(variants) if trusted is None else trusted
    )
    try:
        jobs = [
            _sandbox_job(
                prepared,
                space.materialise({}, dict(changed)),
                targets,
                timeout_s,
                changed,
                start,
                bad,
            )
            for space, (changed, targets), start, bad in zip(
                spaces, variants, starts, untrusted, strict=True
            )
        ]
        results = runner.run_many(jobs)
    finally:
        for space in spaces:
            space.close()
    out = [r if isinstance(r, PytestResult) else None for r in results]
    # the sandbox's CPU (the pool's processes are not this process's waited-for children)
    _SANDBOX_CPU[0] += sum(r.cpu_s for r in out if r is not None)
    return out


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
        write_atomic(path, json.dumps(traced))
    return traced


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
