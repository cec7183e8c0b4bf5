"""Bugs that are more than one mutant: tasks composed from a built bank's confirmed mutants.

A built project's single mutants are each confirmed in the sandbox (each breaks tests
that pass on the pristine project). Two of them applied together make a task with two
bugs, of one of three kinds (``metadata["kind"]`` of the task):

* ``mutants_function``: two sites of one function;
* ``mutants_module``: two functions of one module;
* ``mutants_cross``: two modules.

Each candidate runs in the sandbox as grading runs it (the failing tests' files of both
parts): it is kept when the run completes and fails at least one test that passes on the
pristine project. Fixing one part alone never solves the task: the other part is a
confirmed mutant that breaks tests on its own. Two sites of one function are applied one
after the other (:func:`apply_parts`: grading applies them the same way), and kept only
when the function holds both single mutants' changes (the first may move the second's
site).

``forgegym tasks compose BANK_DIR`` writes ``<project>-<version>.multi.jsonl.gz`` beside
the project's manifest; a :class:`~forgegym.envs.bugfix.real.RealTaskBank` over the
folder serves both.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst

from forgegym.sandbox.jobs import RunStatus
from forgegym.tasklib.factory.manifest import (
    LEVELS,
    _docstring,
    _stable,
    grading_time_limit,
    read_manifest,
    read_project_record,
    write_manifest,
)
from forgegym.tasklib.factory.prepare import PreparedProject, prepare_project
from forgegym.tasklib.factory.runs import _run_sandbox, cpu_seconds
from forgegym.tasklib.mutations import (
    Mutation,
    apply_mutations,
    function_node,
    replace_function,
)
from forgegym.tasklib.project import graded_test_files, imports_of_tests

__all__ = [
    "COMPOSED_KINDS",
    "ComposeStats",
    "apply_parts",
    "compose_bank",
    "compose_project",
    "confirm_bank",
    "confirm_composed",
    "each_project",
    "entry_parts",
    "is_main_manifest",
]

#: The kinds of composed bug, in the order they are built.
COMPOSED_KINDS: tuple[str, ...] = ("mutants_function", "mutants_module", "mutants_cross")
#: Candidates tried per task wanted (some compose into code the tests do not fail on).
_TRIES_PER_TASK = 3
_BATCH = 8


@dataclass
class ComposeStats:
    """What one project's composition did."""

    project: str
    version: str
    tried: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    #: Why candidates were dropped: ``not_applicable`` (the first mutant moved the second
    #: one's site), ``no_failure`` (the tests pass on the composition, or fail only
    #: where they fail on the pristine project), ``run`` (the run did not complete),
    #: ``reference_run`` (the reference's run did not complete: a restored module
    #: refused by grading's trust), ``reference_fails`` (the reference breaks a test or
    #: leaves one failing), ``shown_excluded`` (re-confirmed: the report's test is one
    #: the sandbox no longer passes on the pristine project).
    dropped: dict[str, int] = field(default_factory=dict)
    #: Tests of the record's passing set that fail on the pristine project in today's
    #: sandbox (excluded from the tasks' grading).
    stale_tests: int = 0
    cpu_seconds: float = 0.0

    def drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "version": self.version,
            "tried": dict(self.tried),
            "kept": dict(self.kept),
            "dropped": dict(self.dropped),
            "stale_tests": self.stale_tests,
            "cpu_seconds": round(self.cpu_seconds, 1),
        }


def _part_key(entry: dict[str, Any]) -> str:
    return entry["id"].split("/", 3)[3]  # real/<project>/<version>/<path::fn:op:site>


def _candidates(
    entries: Sequence[dict[str, Any]], kind: str, rng: random.Random, limit: int
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Up to ``limit`` distinct pairs of ``kind``, drawn with ``rng``."""
    by_function: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        by_function[(entry["file"], entry["mutation"][0])].append(entry)
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if kind == "mutants_function":
        for group in by_function.values():
            pairs += [(a, b) for i, a in enumerate(group) for b in group[i + 1 :]]
    else:
        same_file = kind == "mutants_module"
        keys = sorted(by_function)
        for i, (file_a, fn_a) in enumerate(keys):
            for file_b, fn_b in keys[i + 1 :]:
                if (file_a == file_b) == same_file and (file_a, fn_a) != (file_b, fn_b):
                    pairs.append((by_function[(file_a, fn_a)][0], by_function[(file_b, fn_b)][0]))
    rng.shuffle(pairs)
    # one pair per function pair at most, so a few large functions do not fill the kind
    seen: set[frozenset[tuple[str, str]]] = set()
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for a, b in pairs:
        key = frozenset({(a["file"], a["mutation"][0]), (b["file"], b["mutation"][0])})
        if kind != "mutants_function" and key in seen:
            continue
        seen.add(key)
        out.append((a, b))
        if len(out) >= limit:
            break
    return out


def _changed_lines(before: str, after: str) -> tuple[set[str], set[str]]:
    """Lines removed from ``before`` and added in ``after`` (stripped)."""
    removed, added = set(), set()
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        if line.startswith("- "):
            removed.add(line[2:].strip())
        elif line.startswith("+ "):
            added.add(line[2:].strip())
    return removed, added


def entry_parts(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """An entry's changes as parts: ``{"file", "mutation"}`` mutants (one for a single
    mutant) or, for a reverted upstream fix, ``{"file", "function", "from_version",
    "from_sha256", "from_file"}`` coordinates of an earlier release's definition
    (:func:`forgegym.tasklib.factory.revert.resolve_parts` loads its text)."""
    if entry.get("reverts"):
        return [dict(part) for part in entry["reverts"]]
    return entry.get("mutations") or [{"file": entry["file"], "mutation": entry["mutation"]}]


def is_main_manifest(path: Path) -> bool:
    """Whether ``path`` is a project's built manifest (not its composed
    ``.multi.jsonl.gz`` or reverted-fix ``.reverted.jsonl.gz`` tasks)."""
    return path.name.endswith(".jsonl.gz") and not path.name.endswith(
        (".multi.jsonl.gz", ".reverted.jsonl.gz")
    )


def apply_parts(files: dict[str, str], parts: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The files ``parts`` change, each part applied in order to the file as the
    earlier ones left it. A mutant part is applied by its mutation (a second site of one
    function is numbered in the function the first one changed: :func:`_compose_files`
    checks that it is still the site it was); a reverted-fix part replaces its function
    with the earlier release's ``definition`` (loaded by
    :func:`~forgegym.tasklib.factory.revert.resolve_parts`). Composition, the revert
    step and grading all apply an entry's changes with this function."""
    out: dict[str, str] = {}
    for part in parts:
        path = part["file"]
        source = out.get(path, files[path])
        if "mutation" in part:
            out[path] = apply_mutations(source, [Mutation.from_json(part["mutation"])])
        elif "definition" in part:
            out[path] = replace_function(source, part["function"], part["definition"])
        else:
            raise ValueError(
                f"part of {path}: a reverted fix without its definition (load it with "
                "forgegym.tasklib.factory.revert.resolve_parts)"
            )
    return out


def _function_text(source: str, function: str) -> str:
    return cst.Module(body=[function_node(cst.parse_module(source), function)]).code


def _compose_files(files: dict[str, str], parts: Sequence[dict[str, Any]]) -> dict[str, str] | None:
    """The changed files of ``parts`` applied together, ``None`` when two sites of one
    function do not both hold their single mutant's change once composed."""
    try:
        changed = apply_parts(files, parts)
    except ValueError:
        return None
    seen: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for part in parts:
        seen[(part["file"], part["mutation"][0])].append(part)
    for (path, function), group in seen.items():
        if len(group) < 2:
            continue
        original = _function_text(files[path], function)
        composed = _function_text(changed[path], function)
        have_removed, have_added = _changed_lines(original, composed)
        for part in group:
            single = _function_text(apply_parts(files, [part])[path], function)
            removed, added = _changed_lines(original, single)
            if not removed <= have_removed or not added <= have_added:
                return None
    return changed


def _entry(
    parts: Sequence[dict[str, Any]],
    kind: str,
    f2p: list[str],
    p2p: list[str],
    files: list[str],
    shown: dict[str, str],
    docs: list[str],
    excluded: Sequence[str] = (),
) -> dict[str, Any]:
    first = parts[0]
    project, version = first["project"], first["version"]
    functions = list(dict.fromkeys(p["mutation"][0] for p in parts))
    named = " and ".join(f"`{f}`" for f in functions)
    verb = "behave" if len(functions) > 1 else "behaves"
    doc = next((d for d in docs if d), "")
    intro = f"Users of {project} report that {named} no longer {verb} as documented" + (
        f' ("{doc}").' if doc else "."
    )
    lines = [intro, "These tests fail:\n"]
    for test_id, text in shown.items():
        lines.append(f"{test_id}\n```\n{text.strip()[-1200:]}\n```")
    lines.append(
        "Fix the code so they pass without breaking the tests that pass now. "
        "Other tests may check the same behaviour. The test files are read-only."
    )
    features = {
        "n_fail": len(f2p),
        "operator": "+".join(p["mutation"][1] for p in parts),
        "function_lines": sum(p["features"]["function_lines"] for p in parts),
        "distance": max(p["features"]["distance"] for p in parts),
        "parts": len(parts),
    }
    entry: dict[str, Any] = {
        "id": f"real/{project}/{version}/{kind}/" + "+".join(_part_key(p) for p in parts),
        "project": project,
        "version": version,
        "sha256": first["sha256"],
        "kind": kind,
        # the first part's file and mutation: what single-mutant readers use (behaviour
        # checks record calls into this function)
        "file": first["file"],
        "mutation": list(first["mutation"]),
        "mutations": [{"file": p["file"], "mutation": list(p["mutation"])} for p in parts],
        "shown": sorted(shown),
        "f2p": f2p,
        "p2p": p2p,
        "report": "\n".join(lines),
        "features": features,
        "modules": files,
        # two bugs: one level above the harder part's (at most the factory's top level)
        "level": min(LEVELS[-1], max(int(p["level"]) for p in parts) + 1),
    }
    if excluded:
        # tests of the record's passing set that fail on the pristine project in the
        # sandbox: the bank never grades them (RealTaskBank)
        entry["excluded"] = sorted(excluded)
    return entry


#: The wall limit of the pristine project's whole suite in the sandbox (once per project).
_BASELINE_LIMIT_S = 600.0


@dataclass
class _Grading:
    """How grading sees one project: what confirming a composed task's reference needs."""

    prepared: PreparedProject
    record: dict[str, Any]
    sandbox: Any
    #: the test files grading may run, and the repository modules each imports
    visible: list[str]
    test_imports: dict[str, list[str]]
    #: the record's passing tests that pass on the pristine project in the sandbox now
    live: set[str]
    #: the record's passing tests that no longer do (excluded from grading)
    stale: set[str]

    def graded_files(self, f2p: Sequence[str], changed: Sequence[str]) -> list[str]:
        """The test files grading runs (``RepoGrader.selected_files``): those of the
        fail-to-pass tests and every one importing a changed module."""
        return graded_test_files(self.visible, f2p, changed, self.test_imports)


def _project_grading(
    prepared: PreparedProject, record: dict[str, Any], sandbox: Any, say: Any
) -> _Grading:
    """The project as grading sees it, with one run of its whole suite, pristine, in the
    sandbox: a test of the record's passing set that does not pass there now is stale
    (tabulate's numpy and wcwidth tests, rfc3986's idna ones: optional test dependencies
    the sandbox reached when the record was built, and no longer does since trust v2
    binds the harness's packages only). A suite that does not complete leaves the
    record as it is, and each reference's own run decides."""
    left_out = set(record.get("left_out", {}))
    visible = [p for p in prepared.test_files if p not in left_out]
    passing = set(record["passing"])
    imports = imports_of_tests(prepared.files, prepared.layout.import_paths, visible)
    (run,) = _run_sandbox(sandbox, prepared, [({}, visible)], _BASELINE_LIMIT_S)
    if run is None or run.status is not RunStatus.COMPLETED:
        say(f"{record['project']}: the pristine suite did not complete; record kept as built")
        live = set(passing)
    else:
        live = passing & {t for t, ok in run.verdicts.items() if ok}
    if passing - live:
        say(f"{record['project']}: {len(passing - live)} tests of the record fail on pristine")
    return _Grading(prepared, record, sandbox, visible, imports, live, passing - live)


def _confirm_references(
    grading: _Grading, candidates: Sequence[tuple[dict[str, str], Sequence[str]]]
) -> list[tuple[list[str], list[str]] | str]:
    """Each ``(mutant's changed files, tests failing on the mutant)`` candidate's
    reference (every changed file restored) run as grading runs it: the files grading
    selects, under its time limit and its trust (the task's starting files, the mutant,
    are trusted; a module the agent restores is changed code, and markdown's
    ``blockprocessors.py`` then may not call ``sys._getframe``). Returns per candidate
    ``(fail-to-pass, excluded)``, or why it is dropped: ``no_failure`` (it fails only
    stale tests), ``reference_run`` (the run did not complete), ``reference_fails`` (a
    passing test, fail-to-pass included, does not pass on the reference)."""
    out: list[tuple[list[str], list[str]] | str] = ["no_failure"] * len(candidates)
    runs: list[tuple[int, dict[str, str], list[str], list[str]]] = []
    for index, (changed, failing) in enumerate(candidates):
        f2p = sorted(t for t in failing if t in grading.live)
        if f2p:
            runs.append((index, dict(changed), f2p, grading.graded_files(f2p, sorted(changed))))
    if not runs:
        return out
    record_limit = float(grading.record["time_limit_s"])
    limit = max(grading_time_limit(record_limit, len(files)) for *_, files in runs)
    results = _run_sandbox(
        grading.sandbox,
        grading.prepared,
        [({}, files) for *_, files in runs],
        limit,
        trusted=[changed for _, changed, _, _ in runs],
    )
    # A run past its limit is tried once more, one at a time: eight whole suites at once
    # on a loaded machine ran past the limit a quiet one meets (inflection: 2 of 20).
    for at, result in enumerate(results):
        if result is not None and result.status is RunStatus.TIMEOUT:
            _, changed, _, files = runs[at]
            (results[at],) = _run_sandbox(
                grading.sandbox, grading.prepared, [({}, files)], limit, trusted=[changed]
            )
    for (index, _, f2p, files), result in zip(runs, results, strict=True):
        if result is None or result.status is not RunStatus.COMPLETED:
            out[index] = "reference_run"
            continue
        verdicts = result.verdicts
        graded = set(files)
        if any(not verdicts.get(t, False) for t in grading.live if t.partition("::")[0] in graded):
            out[index] = "reference_fails"
            continue
        out[index] = (f2p, sorted(t for t in grading.stale if t.partition("::")[0] in graded))
    return out


def compose_project(
    root: Path,
    entries: Sequence[dict[str, Any]],
    record: dict[str, Any],
    *,
    per_kind: int = 10,
    kinds: Sequence[str] = COMPOSED_KINDS,
    seed: int = 0,
    runner: Any = None,
    log: Any = None,
) -> tuple[list[dict[str, Any]], ComposeStats]:
    """Composed tasks of one project from its confirmed single mutants ``entries`` (the
    pristine project unpacked at ``root``, its build ``record``)."""
    from forgegym.sandbox.runners import get_default_runner

    unknown = [k for k in kinds if k not in COMPOSED_KINDS]
    if unknown:
        raise ValueError(f"kinds: unknown {unknown}; expected some of {list(COMPOSED_KINDS)}")
    if per_kind < 1:
        raise ValueError(f"per_kind: expected at least 1, got {per_kind}")
    say = log or (lambda message: None)
    singles = [e for e in entries if e.get("kind", "mutant") == "mutant"]
    project, version = record["project"], record["version"]
    stats = ComposeStats(project=project, version=version)
    cpu_start = cpu_seconds()
    prepared: PreparedProject = prepare_project(root, requirements=record["requirements"])
    passing = set(record["passing"])
    sandbox = runner or get_default_runner()
    modules = {
        path: cst.parse_module(prepared.files[path])
        for path in sorted({e["file"] for e in singles})
        if path in prepared.files
    }
    docs = {
        (p, fn): _docstring(function_node(modules[p], fn))
        for p, fn in {(e["file"], e["mutation"][0]) for e in singles if e["file"] in modules}
    }
    grading = _project_grading(prepared, record, sandbox, say)
    stats.stale_tests = len(grading.stale)
    out: list[dict[str, Any]] = []
    for kind in kinds:
        rng = random.Random(f"{seed}:{project}:{version}:{kind}")
        pairs = _candidates(singles, kind, rng, per_kind * _TRIES_PER_TASK)
        kept = 0
        for start in range(0, len(pairs), _BATCH):
            if kept >= per_kind:
                break
            batch, variants = [], []
            for a, b in pairs[start : start + _BATCH]:
                stats.tried[kind] = stats.tried.get(kind, 0) + 1
                changed = _compose_files(prepared.files, [a, b])
                if changed is None:
                    stats.drop("not_applicable")
                    continue
                targets = sorted({*a["modules"], *b["modules"]})
                batch.append((a, b))
                variants.append((changed, targets))
            results = _run_sandbox(sandbox, prepared, variants, float(record["time_limit_s"]))
            found = []
            for (a, b), (changed, _), result in zip(batch, variants, results, strict=True):
                if result is None or result.status is not RunStatus.COMPLETED:
                    stats.drop("run")
                    continue
                failing = sorted(t for t, ok in result.verdicts.items() if not ok and t in passing)
                if not failing:
                    stats.drop("no_failure")
                    continue
                messages = {r.nodeid: _stable(r.message) for r in result.records}
                found.append((a, b, changed, failing, messages))
            # the reference of each must reach success as grading grades it (issue 39)
            verdicts = _confirm_references(grading, [(c[2], c[3]) for c in found])
            for (a, b, _, _, messages), verdict in zip(found, verdicts, strict=True):
                if isinstance(verdict, str):
                    stats.drop(verdict)
                    continue
                if kept >= per_kind:
                    break
                f2p, excluded = verdict
                files = sorted({t.split("::", 1)[0] for t in f2p})
                p2p = [t for t in sorted(grading.live) if t.split("::", 1)[0] in files]
                p2p = [t for t in p2p if t not in f2p]
                shown = {f2p[0]: messages.get(f2p[0], "")}
                part_docs = [docs.get((p["file"], p["mutation"][0]), "") for p in (a, b)]
                out.append(_entry([a, b], kind, f2p, p2p, files, shown, part_docs, excluded))
                kept += 1
        stats.kept[kind] = kept
        say(f"{project}: {kind}: {kept} kept of {stats.tried.get(kind, 0)} tried")
    stats.cpu_seconds = cpu_seconds() - cpu_start
    return sorted(out, key=lambda e: e["id"]), stats


#: What a bank step does with one project: ``(pristine root, its main manifest's entries,
#: its record, its sdist cache) -> (new entries, stats, extra summary fields)``.
ProjectStep = Callable[
    [Path, list[dict[str, Any]], dict[str, Any], Path | None],
    tuple[list[dict[str, Any]], Any, dict[str, Any]],
]


def each_project(
    bank_dir: Path,
    suffix: str,
    step: ProjectStep,
    *,
    projects: Sequence[str] = (),
    cache_dir: Path | None = None,
) -> list[Any]:
    """Run ``step`` on every project of a built bank folder (or of ``projects``) with its
    pristine sdist unpacked, and write what it returns beside the project's manifest:
    ``<project>-<version>.<suffix>.jsonl.gz`` and the ``.<suffix>.json`` summary (the
    step's stats and extra fields, a digest of the ids, the wall time). The sdist cache
    is ``cache_dir``, else the one the bank was built with. Returns the stats."""
    from forgegym.tasklib.factory.source import fetch_sdist, unpack_sdist

    done: list[Any] = []
    for manifest in sorted(bank_dir.glob("*.jsonl.gz")):
        if not is_main_manifest(manifest):
            continue
        entries = read_manifest(manifest)
        if not entries or (projects and entries[0]["project"] not in projects):
            continue
        first = entries[0]
        record = read_project_record(bank_dir, first["project"], first["version"])
        cache = cache_dir
        if cache is None and record.get("sdist_cache"):
            cache = Path(record["sdist_cache"])
        started = time.perf_counter()
        sdist, _ = fetch_sdist(first["project"], first["version"], cache, sha256=first["sha256"])
        with tempfile.TemporaryDirectory(prefix=f"forge-{suffix}-src-") as scratch:
            root = unpack_sdist(sdist, Path(scratch))
            built, stats, extra = step(root, entries, record, cache)
        stem = manifest.name.removesuffix(".jsonl.gz")
        write_manifest(bank_dir / f"{stem}.{suffix}.jsonl.gz", built)
        digest = hashlib.sha256("".join(e["id"] for e in built).encode()).hexdigest()[:16]
        summary = {
            **stats.to_json(),
            **extra,
            "ids_sha256": digest,
            "wall_seconds": round(time.perf_counter() - started, 1),
        }
        (bank_dir / f"{stem}.{suffix}.json").write_text(
            json.dumps(summary, indent=1, sort_keys=True) + "\n"
        )
        done.append(stats)
    return done


def compose_bank(
    bank_dir: Path,
    *,
    per_kind: int = 10,
    kinds: Sequence[str] = COMPOSED_KINDS,
    seed: int = 0,
    projects: Sequence[str] = (),
    cache_dir: Path | None = None,
    log: Any = None,
) -> list[ComposeStats]:
    """Compose the tasks of every project of a built bank folder (or of ``projects``,
    names as in the manifests) and write ``<project>-<version>.multi.jsonl.gz`` and its
    ``.multi.json`` statistics beside each manifest."""

    def step(
        root: Path, entries: list[dict[str, Any]], record: dict[str, Any], cache: Path | None
    ) -> tuple[list[dict[str, Any]], ComposeStats, dict[str, Any]]:
        composed, stats = compose_project(
            root, entries, record, per_kind=per_kind, kinds=kinds, seed=seed, log=log
        )
        return composed, stats, {"seed": seed, "per_kind": per_kind}

    return each_project(bank_dir, "multi", step, projects=projects, cache_dir=cache_dir)


def confirm_composed(
    root: Path,
    entries: Sequence[dict[str, Any]],
    record: dict[str, Any],
    *,
    runner: Any = None,
    log: Any = None,
) -> tuple[list[dict[str, Any]], ComposeStats]:
    """Confirm already composed ``entries`` as :func:`compose_project` now confirms new
    ones: each reference run as grading runs it must pass every test that passes on the
    pristine project (fail-to-pass included). Kept entries lose the stale tests from
    their fail-to-pass and pass-to-pass lists and name them as ``excluded``; an entry
    whose shown test is stale is dropped (its report shows a failure grading never
    counts). ``stats.kept`` and ``dropped`` count this confirmation only."""
    from forgegym.sandbox.runners import get_default_runner

    say = log or (lambda message: None)
    project, version = record["project"], record["version"]
    stats = ComposeStats(project=project, version=version)
    cpu_start = cpu_seconds()
    prepared = prepare_project(root, requirements=record["requirements"])
    grading = _project_grading(prepared, record, runner or get_default_runner(), say)
    stats.stale_tests = len(grading.stale)
    out: list[dict[str, Any]] = []
    for start in range(0, len(entries), _BATCH):
        batch = list(entries[start : start + _BATCH])
        candidates = [(apply_parts(prepared.files, entry_parts(e)), e["f2p"]) for e in batch]
        for entry, verdict in zip(batch, _confirm_references(grading, candidates), strict=True):
            kind = entry["kind"]
            stats.tried[kind] = stats.tried.get(kind, 0) + 1
            if isinstance(verdict, str):
                stats.drop(verdict)
                continue
            f2p, excluded = verdict
            if not set(entry["shown"]) <= set(f2p):
                stats.drop("shown_excluded")
                continue
            confirmed = {
                **entry,
                "f2p": f2p,
                "p2p": [t for t in entry["p2p"] if t in grading.live],
                "features": {**entry["features"], "n_fail": len(f2p)},
            }
            confirmed.pop("excluded", None)
            if excluded:
                confirmed["excluded"] = excluded
            out.append(confirmed)
            stats.kept[kind] = stats.kept.get(kind, 0) + 1
    stats.cpu_seconds = cpu_seconds() - cpu_start
    say(f"{project}: {len(out)} of {len(entries)} composed tasks confirmed; {stats.dropped}")
    return sorted(out, key=lambda e: e["id"]), stats


def confirm_bank(
    bank_dir: Path,
    *,
    projects: Sequence[str] = (),
    cache_dir: Path | None = None,
    log: Any = None,
) -> list[ComposeStats]:
    """Confirm every project's composed tasks (``<project>-<version>.multi.jsonl.gz``)
    in place (:func:`confirm_composed`): the manifest keeps the confirmed ones, and the
    ``.multi.json`` summary adds a ``confirmed`` section to the composition's."""
    composed = {
        path.name.removesuffix(".multi.jsonl.gz"): path
        for path in bank_dir.glob("*.multi.jsonl.gz")
    }
    names = []
    for manifest in sorted(bank_dir.glob("*.jsonl.gz")):
        stem = manifest.name.removesuffix(".jsonl.gz")
        if is_main_manifest(manifest) and stem in composed:
            entries = read_manifest(manifest)
            if entries and (not projects or entries[0]["project"] in projects):
                names.append(entries[0]["project"])
    if not names:
        return []

    def step(
        root: Path, entries: list[dict[str, Any]], record: dict[str, Any], cache: Path | None
    ) -> tuple[list[dict[str, Any]], ComposeStats, dict[str, Any]]:
        stem = f"{record['project']}-{record['version']}"
        summary_path = bank_dir / f"{stem}.multi.json"
        summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
        confirmed, stats = confirm_composed(root, read_manifest(composed[stem]), record, log=log)
        # the composition's options stay; this confirmation is its own section
        extra: dict[str, Any] = {k: summary[k] for k in ("seed", "per_kind") if k in summary}
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        extra["confirmed"] = {**stats.to_json(), "date": when}
        original = ComposeStats(
            project=stats.project,
            version=stats.version,
            tried=summary.get("tried", {}),
            kept={k: sum(e["kind"] == k for e in confirmed) for k in COMPOSED_KINDS},
            dropped={
                **summary.get("dropped", {}),
                **{k: summary.get("dropped", {}).get(k, 0) + n for k, n in stats.dropped.items()},
            },
            stale_tests=stats.stale_tests,
            cpu_seconds=float(summary.get("cpu_seconds", 0.0)) + stats.cpu_seconds,
        )
        return confirmed, original, extra

    return each_project(bank_dir, "multi", step, projects=names, cache_dir=cache_dir)
