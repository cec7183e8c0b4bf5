"""Bugfix tasks from real projects: the factory's manifest bank (``bank="real"``).

A manifest line (written by ``forgegym tasks build``, :mod:`forgegym.tasklib.factory`)
names a pinned sdist (project, version, sha256), a source file, one mutation and the
tests it breaks. No source is shipped: a task materialises on first use from the cached
sdist (checked against its sha256; fetched from the index when absent, else a
:class:`~forgegym.tasklib.factory.ColdCacheError` naming the file to provide), the
mutation is applied, and the task is graded like every repository task
(:class:`~forgegym.envs.bugfix.repo.RepoGrader`): every fail-to-pass test must pass and
every pass-to-pass test of the touched test modules must keep passing.

Because the pristine function is known, a real task is also graded by **behaviour
checks** (:mod:`forgegym.envs.bugfix.behaviour`): the calls its tests make into the
mutated function, recorded on the pristine project, plus inputs derived from them, run
on the candidate in the sandbox and compared in the parent with the pristine outcomes
(which never enter the child). Success needs every call right; the fail-to-pass credit
never exceeds the share of bug-showing calls the candidate gets right, so a test process
that reports every test passed while the bug stays earns what the no-op earns. A task
whose function has no reproducible call is graded by its tests alone, and the breakdown
says which checks graded it (the ``behaviour`` term's detail, and a note).

What the agent sees: the whole project as repository mode serves it (read through the
navigation actions; the package sources editable, tests read-only) and a bug report with
one or two of the failing tests' output. The project's record (``.project.json`` beside
the manifest) pins its test dependencies (installed once into a cached environment), the
tests that pass in the sandbox and the time limit measured at build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from forgegym.core.bank import ManifestTaskBank
from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.bugfix.behaviour import BehaviourChecks, behaviour_checks
from forgegym.envs.bugfix.repo import FAMILY, RepoHidden
from forgegym.envs.bugfix.statements import LEVEL_OFFSET, render_statement, statement_styles
from forgegym.rewards.phases import phase
from forgegym.sandbox.atomic import write_atomic
from forgegym.sandbox.runners.warm import is_compiled, register_tests
from forgegym.tasklib.factory import fetch_sdist, unpack_sdist
from forgegym.tasklib.factory.build import (
    LEVELS,
    PreparedProject,
    prepare_project,
    read_project_record,
)
from forgegym.tasklib.factory.compose import apply_parts
from forgegym.tasklib.factory.manifest import GRADING_TIME_CAP_S, grading_time_limit
from forgegym.tasklib.factory.manifest_index import ManifestIndex
from forgegym.tasklib.factory.revert import resolve_parts
from forgegym.tasklib.factory.source import cached_sdist, default_cache_dir, unpacked_intact
from forgegym.tasklib.project import (
    graded_test_files,
    imports_of_tests,
    is_package_source,
    is_test_support,
)

__all__ = ["REAL_BANK_DIR", "RealTaskBank", "materialise_project"]

#: The most a real task's test run may take (repository mode's default cap).
REAL_TIME_LIMIT_CAP_S = GRADING_TIME_CAP_S
#: The shipped manifests (one ``<project>-<version>.jsonl.gz`` per project).
REAL_BANK_DIR = Path(__file__).with_name("data") / "real"


def _projects_dir() -> Path:
    env = os.environ.get("FORGEGYM_REAL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "forgegym" / "real"


def materialise_project(
    entry: dict[str, Any], cache_dir: Path | None = None, *, allow_download: bool = True
) -> Path:
    """The unpacked pristine tree of ``entry``'s sdist (unpacked once, then reused while
    it still holds exactly the sdist's files: :func:`unpacked_intact`)."""
    sdist, digest = fetch_sdist(
        entry["project"],
        entry["version"],
        cache_dir,
        sha256=entry["sha256"],
        allow_download=allow_download,
    )
    target = _projects_dir() / f"{entry['project']}-{entry['version']}-{digest[:12]}"
    if target.is_dir() and not unpacked_intact(target, sdist):
        # Something ran in the shared tree and left files (or removed some): unpack afresh
        # rather than serve its outputs as the project's pristine files.
        stale = target.with_name(f".stale-{target.name}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(target, stale)
            shutil.rmtree(stale, ignore_errors=True)
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unpack-"))
        root = unpack_sdist(sdist, scratch)
        try:
            os.replace(root, target)  # atomic: a concurrent unpack of the same sdist is harmless
        except OSError:
            if not target.is_dir():
                raise
        shutil.rmtree(scratch, ignore_errors=True)
    return target


#: Bumped when :func:`~forgegym.tasklib.project.imports_of_tests` changes what it finds.
_IMPORTS_VERSION = 1


def _test_imports(
    root: Path, prepared: PreparedProject, visible: tuple[str, ...]
) -> dict[str, list[str]]:
    """:func:`~forgegym.tasklib.project.imports_of_tests` of the project's visible tests,
    cached beside the unpacked project (keyed by its files): the first reset of a task in
    a new process reads it instead of parsing the whole project again."""
    digest = hashlib.sha256(f"{_IMPORTS_VERSION}\0{sys.version_info[:2]}\0".encode())
    for path in sorted(prepared.files):
        digest.update(path.encode() + b"\0" + prepared.files[path].encode() + b"\0")
    digest.update(json.dumps([prepared.layout.import_paths, visible]).encode())
    cache = _projects_dir() / ".imports" / f"{root.name}-{digest.hexdigest()[:24]}.json"
    try:
        found = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(found, dict) and set(found) == set(visible):
            return {str(k): [str(m) for m in v] for k, v in found.items()}
    except (OSError, ValueError):
        pass
    found = imports_of_tests(prepared.files, prepared.layout.import_paths, list(visible))
    with contextlib.suppress(OSError):
        write_atomic(cache, json.dumps(found))
    return found


@dataclass(frozen=True)
class _ProjectBase:
    """What every task of one project shares (read and installed once per bank)."""

    prepared: PreparedProject
    visible_tests: tuple[str, ...]
    editable: tuple[str, ...]
    test_imports: dict[str, list[str]]
    passing: tuple[str, ...]
    collected: tuple[str, ...]
    time_limit_s: float
    #: where the project's sdists are found (a reverted fix's earlier release too)
    sdist_cache: Path | None = None
    allow_download: bool = True
    #: tests moved out of ``passing`` since the build because they fail on the pristine
    #: project under today's sandbox (``benchmarks/real_bank/recheck_passing.py``)
    rechecked_out: frozenset[str] = frozenset()


def _project_base(
    entry: dict[str, Any], record: dict[str, Any], cache_dir: Path | None, allow_download: bool
) -> _ProjectBase:
    with phase("materialise"):
        root = materialise_project(entry, cache_dir, allow_download=allow_download)
    with phase("project"):  # read the tree and its layout; its dependency environment
        prepared = prepare_project(root, requirements=record["requirements"])
    left_out = set(record.get("left_out", {}))
    visible = tuple(p for p in prepared.test_files if p not in left_out)
    layout = prepared.layout
    editable = tuple(
        p
        for p in sorted(prepared.files)
        if p.endswith(".py")
        and not is_test_support(p)
        and not layout.is_test_file(p)
        and is_package_source(p, layout.import_paths)
    )
    # Warm zygotes: pytest's rewritten code of the project's tests and conftests (files
    # every task of the project shows the agent; never package sources), compiled once
    # and cached beside the unpacked projects.
    with phase("warm_code"):
        _register_tests(root, prepared)
    with phase("project"):
        imports = _test_imports(root, prepared, visible)
    return _ProjectBase(
        prepared=prepared,
        visible_tests=visible,
        editable=editable,
        test_imports=imports,
        passing=tuple(record["passing"]),
        collected=tuple(record.get("collected", record["passing"])),
        time_limit_s=float(record["time_limit_s"]),
        sdist_cache=cache_dir,
        allow_download=allow_download,
        rechecked_out=frozenset(record.get("rechecked_out", {})),
    )


def warm_code_enabled() -> bool:
    """Whether real projects register warm test code (``FORGEGYM_WARM_CODE=0``: no, the
    unoptimised path, for comparisons)."""
    return os.environ.get("FORGEGYM_WARM_CODE", "1").strip() not in ("0", "false", "no")


def _register_tests(root: Path, prepared: PreparedProject) -> None:
    """Register the project's warm test code: at once when an earlier process compiled
    it (read from disk), else compiled in a background thread (seconds for a large
    suite: a cold first reset does not wait for it; zygotes started meanwhile run
    without it and are replaced once it is registered)."""
    if not warm_code_enabled():
        return
    layout = prepared.layout
    files = {
        p: text
        for p, text in prepared.files.items()
        if layout.is_test_file(p) or PurePosixPath(p).name == "conftest.py"
    }
    directory = _projects_dir() / ".warm"
    if is_compiled(files, directory):
        register_tests(files, directory)
        return
    threading.Thread(
        target=register_tests, args=(files, directory), name="forgegym-warm-code", daemon=True
    ).start()


def variant_id(entry_id: str, statement: str) -> str:
    """The task id of a manifest entry told in ``statement`` style (the entry's own id
    for the factory's ``traceback`` style)."""
    return entry_id if statement == "traceback" else f"{entry_id}@{statement}"


def split_variant_id(task_id: str) -> tuple[str, str]:
    """``(entry id, statement style)`` of a task id (see :func:`variant_id`)."""
    entry_id, at, style = task_id.rpartition("@")
    if at and style in LEVEL_OFFSET:
        return entry_id, style
    return task_id, "traceback"


#: Mutated files by manifest entry, shared by every bank of the process (a trainer's
#: dataset env and its reward env build the same tasks; libcst's parse and print of the
#: file were ~55 ms of each build). The entry pins the project (its sdist's SHA-256).
_MUTATED: dict[str, dict[str, str]] = {}
_MUTATED_MAX = 2048
_MUTATED_LOCK = threading.Lock()


def _mutated_files(entry: dict[str, Any], base: _ProjectBase) -> dict[str, str]:
    """The files the entry's bug changes, path -> mutated source (memoised by entry)."""
    digest = hashlib.sha256(json.dumps(entry, sort_keys=True, default=str).encode())
    digest.update(base.prepared.files.get(str(entry.get("file")), "").encode())
    key = digest.hexdigest()
    with _MUTATED_LOCK:
        known = _MUTATED.get(key)
    if known is not None:
        return dict(known)
    # one path for every kind: mutants, composed mutants and reverted upstream fixes
    # (whose earlier definition is read from that release's pinned sdist)
    parts = resolve_parts(entry, base.sdist_cache, allow_download=base.allow_download)
    changed = apply_parts(base.prepared.files, parts)
    with _MUTATED_LOCK:
        if len(_MUTATED) >= _MUTATED_MAX:
            _MUTATED.pop(next(iter(_MUTATED)))
        _MUTATED[key] = dict(changed)
    return changed


def build_real_task(
    entry: dict[str, Any],
    base: _ProjectBase,
    behaviour: dict[str, Any] | None = None,
    statement: str = "traceback",
) -> Task:
    """The :class:`~forgegym.core.task.Task` of one manifest entry: the whole project (as
    repository mode serves it), the mutation applied to its file; ``behaviour``: its
    behaviour checks (:mod:`forgegym.envs.bugfix.behaviour`), kept with the hidden data;
    ``statement``: the statement style (:mod:`forgegym.envs.bugfix.statements`): a style
    other than the factory's ``traceback`` is its own task, ``<id>@<style>``, at the
    entry's level plus the style's offset."""
    prepared = base.prepared
    files = dict(prepared.files)
    changed = _mutated_files(entry, base)
    reference = {path: prepared.files[path] for path in changed}
    files.update(changed)
    editable = tuple(sorted({*base.editable, *changed}))
    # Grading runs the fail-to-pass files and every test file importing a changed module:
    # the limit grows with the files the reference fix makes run (records of early builds
    # measured the slowest file alone), within the repository mode's cap.
    graded = graded_test_files(base.visible_tests, entry["f2p"], changed, base.test_imports)
    limit = grading_time_limit(base.time_limit_s, len(graded))
    # An entry may name tests of the record's passing set that its factory step saw
    # fail on the pristine project in the sandbox (optional test dependencies the
    # sandbox no longer reaches since trust v2: tabulate's numpy, rfc3986's idna): never
    # graded, as the tests failing at build are not.
    stale = set(entry.get("excluded", ()))
    # A fail-to-pass test the pristine project fails today can pass for no candidate
    # (tomlkit's test_toml_file under trust D11): graded by the others.
    f2p = [t for t in entry["f2p"] if t not in base.rechecked_out] or list(entry["f2p"])
    hidden = RepoHidden(
        failing_tests=f2p,
        passing_tests=[t for t in base.passing if t not in set(entry["f2p"]) and t not in stale],
        test_imports=base.test_imports,
        time_limit_s=limit,
        # tests failing on the pristine project are never graded (markupsafe's reference
        # scored 0.936 on them)
        excluded=sorted((set(base.collected) - set(base.passing)) | stale),
        behaviour=behaviour,
    )
    visible_files = set(base.visible_tests)
    title, description = render_statement(entry, statement)
    return Task(
        task_id=variant_id(entry["id"], statement),
        family=FAMILY,
        difficulty=int(entry["level"]) + LEVEL_OFFSET[statement],
        title=title,
        description=description,
        files=files,
        data_files=prepared.data_files,
        editable_files=editable,
        visible_test_files=base.visible_tests,
        visible_test_ids=tuple(t for t in base.collected if t.partition("::")[0] in visible_files),
        hidden=hidden.model_dump(),
        reference=reference,
        metadata={
            "project": entry["project"],
            "version": entry["version"],
            "sha256": entry["sha256"],
            "file": entry["file"],
            "mutation": list(entry["mutation"]),
            "shown": list(entry["shown"]),
            "features": dict(entry["features"]),
            "n_failing": len(entry["f2p"]),
            # issue 39: what kind of bug (mutant, composed mutants, reverted_fix), told how
            "kind": entry.get("kind", "mutant"),
            "statement": statement,
            "project_run": prepared.run.model_dump(mode="json"),
            "time_limit_s": limit,
        },
    )


class RealTaskBank(ManifestTaskBank):
    """The factory's tasks (``gym.make("Forge/Bugfix-v0", bank="real")``).

    Args:
        manifests: manifest files or folders of ``*.jsonl.gz``/``*.jsonl`` (default:
            the shipped bank, :data:`REAL_BANK_DIR`).
        cache_dir: the sdist cache (default ``$FORGEGYM_SDIST_CACHE`` or
            ``~/.cache/forgegym/sdists``).
        allow_download: fetch a missing sdist from the index (else a cold cache is an error).
        behaviour: grade with behaviour checks (:mod:`forgegym.envs.bugfix.behaviour`):
            computed at a task's first use (a host run of its tests on the pristine
            project, three sandbox jobs) and cached; ``False``: the tests alone.
        statements: the statement styles served (:mod:`forgegym.envs.bugfix.statements`):
            ``"traceback"`` (default: the factory's report, levels 1-4), another style,
            a list of styles, or ``"all"``: each entry becomes one task per style (ids
            ``<id>@assertion``, ``<id>@symptom``), at its level plus the style's offset
            (``"all"``: levels 1-6).
    """

    family = FAMILY
    difficulty_levels: tuple[int, ...] = LEVELS

    def __init__(
        self,
        manifests: Path | str | Iterable[Path | str] = REAL_BANK_DIR,
        *,
        cache_dir: Path | str | None = None,
        allow_download: bool = True,
        behaviour: bool = True,
        statements: str | Sequence[str] = "traceback",
    ) -> None:
        if not isinstance(behaviour, bool):
            raise ValueError(f"behaviour: expected a bool, got {behaviour!r}")
        self.behaviour = behaviour
        self.statements = statement_styles(
            statements if isinstance(statements, str) else tuple(statements)
        )
        offsets = sorted({LEVEL_OFFSET[style] for style in self.statements})
        self.difficulty_levels = tuple(sorted({lv + o for lv in LEVELS for o in offsets}))
        paths = [manifests] if isinstance(manifests, str | Path) else list(manifests)
        files: list[Path] = []
        for raw in paths:
            path = Path(raw)
            if path.is_dir():
                files += sorted(
                    p for p in path.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz"))
                )
            elif path.is_file():
                files.append(path)
            else:
                raise FileNotFoundError(f"manifests: {path} is neither a manifest nor a folder")
        # Entries are parsed on demand (a reset needs one of 8,600; reading them all cost
        # gym.make ~8 s); the project records (small) are read here, a missing one an error.
        self._entries = ManifestIndex(files)
        self._records: dict[tuple[str, str], dict[str, Any]] = {}
        for entry_id in self._entries.ids():
            where = self._entries.indexed(entry_id)
            key = (where.project, where.version)
            if key not in self._records:
                self._records[key] = read_project_record(where.file.parent, *key)
        self._bases: dict[tuple[str, str], _ProjectBase] = {}
        self._lock = threading.Lock()
        if not len(self._entries):
            raise ValueError(
                f"manifests: no task in {[str(p) for p in paths]}; build some "
                "with `forgegym tasks build --from-pypi NAME==VERSION`"
            )
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._cache_given = cache_dir is not None
        self.allow_download = allow_download
        super().__init__(
            {
                variant_id(i, style): self._entries.indexed(i).level + LEVEL_OFFSET[style]
                for i in self._entries.ids()
                for style in self.statements
            }
        )

    def entry(self, task_id: str) -> dict[str, Any]:
        """The manifest entry of ``task_id`` (a copy; a statement variant's is its
        entry's)."""
        entry_id, style = split_variant_id(task_id)
        if entry_id not in self._entries or style not in self.statements:
            raise UnknownTaskError(task_id)
        return json.loads(json.dumps(self._entries.entry(entry_id)))

    def projects(self) -> dict[str, int]:
        """Tasks per ``project==version``."""
        counts = {f"{p}=={v}": n for (p, v), n in self._entries.projects().items()}
        return dict(sorted(counts.items()))

    def sdist_cache(self, record: dict[str, Any]) -> Path:
        """Where a project's sdist is looked up: the ``cache_dir`` given to the bank, else
        the folder the bank was built with (``forgegym tasks build --cache-dir``, kept in
        its project record) when it holds the sdist, else the default cache."""
        if self._cache_given:
            return self.cache_dir
        built_with = record.get("sdist_cache")
        if built_with and cached_sdist(record["project"], record["version"], Path(built_with)):
            return Path(built_with)
        return self.cache_dir

    def unchecked(self, task_id: str) -> Task:
        """The task without its behaviour checks (no sandbox run: what a canary's plan
        reads of a task it may not take, design note 006 D4)."""
        entry_id, style = split_variant_id(task_id)
        if entry_id not in self._entries:
            raise UnknownTaskError(task_id)
        entry = self._entries.entry(entry_id)
        key = (entry["project"], entry["version"])
        with self._lock:
            base = self._bases.get(key)
            if base is None:
                record = self._records[key]
                cache = self.sdist_cache(record)
                base = _project_base(entry, record, cache, self.allow_download)
                self._bases[key] = base
        return build_real_task(entry, base, statement=style)

    def build(self, task_id: str) -> Task:
        entry_id = split_variant_id(task_id)[0]
        task = self.unchecked(task_id)
        if not self.behaviour:
            return task
        # the checks belong to the bug, shared by its statement variants; the task with
        # them is the same task (not mutated and rebuilt a second time)
        checks = self.checks(entry_id, task).model_dump(mode="json")
        return task.model_copy(update={"hidden": {**task.hidden, "behaviour": checks}})

    def checks(self, task_id: str, task: Task | None = None) -> BehaviourChecks:
        """The behaviour checks of ``task_id`` (cached on disk; computed at first use). A
        failure to compute them leaves the task graded by its tests (status
        ``unavailable``, with the cause)."""
        entry_id = split_variant_id(task_id)[0]
        entry = self._entries.entry(entry_id)
        task = task or build_real_task(entry, self._bases[(entry["project"], entry["version"])])
        base = self._bases[(entry["project"], entry["version"])]
        try:
            return behaviour_checks(entry_id, base.prepared, entry, task.files)
        except Exception as exc:  # noqa: BLE001 - the tests still grade the task
            return BehaviourChecks(status="unavailable", note=f"{type(exc).__name__}: {exc}"[:300])
