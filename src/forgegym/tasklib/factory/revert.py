"""Bugs that revert a real upstream fix: a function of the pinned release put back as an
earlier release wrote it (issue 39).

The bank's task stays the pinned release V (its record, pins and passing tests). A
reverted-fix task is V with one function or method replaced by its definition in an
earlier release U, where V's own tests that pass on V fail on it: the bug is one the
project really shipped and later fixed. Candidates, for each of a few releases U before
V (the index's newest first):

1. U's changelog section: the section of V's changelog file (``CHANGES*``,
   ``CHANGELOG*``, ``HISTORY*``, ``NEWS*``, ``docs/changelog*``...) between U's and V's
   headings must mention a fix (fix, bug, regression); else every candidate of U is
   dropped as ``no_changelog_fix``. Whether it names the function is recorded
   (``changelog.names_function``), and such candidates are run first.
2. Functions (``Class.method`` too) of the modules V's tests import, defined in both
   releases (the module found by its path below the import root, so a move to ``src/``
   is followed) whose code differs once docstrings are set aside; kept when the
   difference is small (``too_large`` past :data:`MAX_CHANGED_LINES` changed lines), U's
   definition uses no name V's module lacks (``missing_name``), and V's module with it
   parses and compiles (``does_not_parse``). A definition already taken from a newer U
   is not tried again (``duplicate``).
3. The sandbox, as the factory runs it: the test files importing the module; kept when
   the run completes (``run``) and fails a test of the record's ``passing``
   (``no_failure``).

Manifests never carry the projects' code: an entry holds coordinates (``reverts``: the
file, the function, U's version, the sha256 of U's sdist and the file's path in U), and
:func:`resolve_parts` reads the definition from U's sdist (cached and pinned like V's)
when the task is built. ``forgegym tasks revert DIR`` writes
``<project>-<version>.reverted.jsonl.gz`` and ``.reverted.json`` beside the manifest.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import functools
import json
import re
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import libcst as cst

from forgegym.sandbox.jobs import RunStatus
from forgegym.tasklib.factory.compose import apply_parts, each_project, entry_parts
from forgegym.tasklib.factory.manifest import (
    _distance,
    _docstring,
    _report,
    _stable,
    difficulty_level,
)
from forgegym.tasklib.factory.prepare import PreparedProject, prepare_project
from forgegym.tasklib.factory.runs import _run_sandbox, cpu_seconds
from forgegym.tasklib.factory.source import (
    ColdCacheError,
    cached_sdist,
    fetch_sdist,
    read_sdist_files,
    sha256_of,
)
from forgegym.tasklib.mutations import function_names, function_node
from forgegym.tasklib.project import imports_of_tests, is_package_source, is_test_support

__all__ = [
    "KIND",
    "MAX_CHANGED_LINES",
    "Release",
    "RevertStats",
    "changelog_section",
    "find_changelog",
    "pypi_releases",
    "resolve_parts",
    "revert_bank",
    "revert_project",
]

#: ``metadata["kind"]`` of a reverted-fix task.
KIND = "reverted_fix"
#: The most changed lines (removed plus added) between the two definitions.
MAX_CHANGED_LINES = 12
#: Changelog files, by name below the project root (case-insensitive).
_CHANGELOG = re.compile(
    r"^(docs?/)?(changes|changelog|history|news|release[-_ ]?notes)([-_.][\w.-]*)?$", re.I
)
_FIX_WORDS = re.compile(r"\b(fix|fixe[sd]|fixing|bugs?|bugfix(es)?|regressions?)\b", re.I)
_BATCH = 8
#: Why candidates are dropped, in the order they are checked.
REASONS = (
    "no_changelog_fix",
    "too_large",
    "missing_name",
    "does_not_parse",
    "duplicate",
    "over_cap",
    "run",
    "no_failure",
)


@dataclass(frozen=True)
class Release:
    """An earlier release: its version and its sdist's sha256 (and where the index
    serves it, when known)."""

    version: str
    sha256: str
    url: str = ""
    filename: str = ""


@dataclass
class RevertStats:
    """What one project's revert step did."""

    project: str
    version: str
    #: per release looked at: its changelog verdict and its candidates
    releases: dict[str, dict[str, Any]] = field(default_factory=dict)
    changelog: str = ""
    candidates: int = 0
    kept: int = 0
    kept_naming_function: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    cpu_seconds: float = 0.0

    def drop(self, reason: str, count: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + count

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "version": self.version,
            "changelog": self.changelog,
            "releases": self.releases,
            "candidates": self.candidates,
            "kept": self.kept,
            "kept_naming_function": self.kept_naming_function,
            "dropped": {r: self.dropped[r] for r in REASONS if r in self.dropped},
            "cpu_seconds": round(self.cpu_seconds, 1),
        }


# -- releases and sdists ------------------------------------------------------------


def pypi_releases(project: str, before: str, limit: int, timeout_s: float = 30.0) -> list[Release]:
    """The ``limit`` newest final releases of ``project`` before ``before`` that have an
    sdist, newest first, from the index's JSON API."""
    from packaging.version import InvalidVersion, Version

    url = f"https://pypi.org/pypi/{project}/json"
    with urllib.request.urlopen(url, timeout=timeout_s) as answer:  # noqa: S310 - fixed https host
        data = json.load(answer)
    newest = Version(before)
    found: list[tuple[Any, Release]] = []
    for raw, files in data.get("releases", {}).items():
        try:
            version = Version(raw)
        except InvalidVersion:
            continue
        if version.is_prerelease or version.is_devrelease or version >= newest:
            continue
        sdists = [
            f
            for f in files
            if f.get("packagetype") == "sdist"
            and not f.get("yanked")
            and f["filename"].endswith((".tar.gz", ".zip"))
        ]
        if sdists:
            f = sdists[0]
            # a mirror may answer with addresses relative to the API's
            address = urllib.parse.urljoin(url, f["url"])
            found.append((version, Release(raw, f["digests"]["sha256"], address, f["filename"])))
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [release for _, release in found[:limit]]


def _fetch_release(project: str, release: Release, cache: Path) -> Path:
    """The sdist of ``release`` in ``cache``, downloaded from its index address when
    absent (not through pip: pip would build an old release's metadata), its sha256
    checked."""
    path = cached_sdist(project, release.version, cache)
    if path is None and release.url:
        cache.mkdir(parents=True, exist_ok=True)
        target = cache / release.filename
        scratch = target.with_name(f".{target.name}.part")
        with urllib.request.urlopen(release.url, timeout=300) as answer:  # noqa: S310
            scratch.write_bytes(answer.read())
        scratch.replace(target)
        path = target
    if path is None:
        raise ColdCacheError(f"the sdist of {project}=={release.version} is not in {cache}")
    digest = sha256_of(path)
    if digest != release.sha256:
        raise ValueError(f"{path.name}: sha256 {digest} is not the index's {release.sha256}")
    return path


@functools.lru_cache(maxsize=64)
def _sdist_file(sdist: str, sha256: str, path: str) -> str:
    """One file of a pinned sdist (keyed by its digest, so a replaced file is read again)."""
    found = read_sdist_files(Path(sdist), lambda p: p == path)
    if path not in found:
        raise FileNotFoundError(f"{Path(sdist).name} has no file {path}")
    return found[path]


def _definition(source: str | cst.Module, function: str) -> str:
    """The text of ``function``'s definition (decorators included, no leading lines)."""
    node = function_node(source, function)
    return cst.Module(body=[node.with_changes(leading_lines=())]).code


def resolve_parts(
    entry: dict[str, Any], cache_dir: Path | None, *, allow_download: bool = True
) -> list[dict[str, Any]]:
    """:func:`~forgegym.tasklib.factory.compose.entry_parts` of ``entry``, each reverted
    fix given its ``definition`` read from the earlier release's pinned sdist (fetched
    into ``cache_dir`` when absent, like the task's own sdist)."""
    parts = entry_parts(entry)
    for part in parts:
        if "from_version" not in part or "definition" in part:
            continue
        sdist, digest = fetch_sdist(
            entry["project"],
            part["from_version"],
            cache_dir,
            sha256=part["from_sha256"],
            allow_download=allow_download,
        )
        source = _sdist_file(str(sdist), digest, part.get("from_file") or part["file"])
        part["definition"] = _definition(source, part["function"])
    return parts


# -- the changelog -------------------------------------------------------------------


def find_changelog(names: Sequence[str]) -> str | None:
    """The changelog among a project's file paths (at the root or under ``docs/``)."""
    found = sorted((p for p in names if _CHANGELOG.match(p)), key=lambda p: (p.count("/"), p))
    return found[0] if found else None


def _heading(lines: Sequence[str], version: str) -> int | None:
    """The first line that looks like ``version``'s heading (short, not a bullet)."""
    variants = [version] + ([version.removesuffix(".0")] if version.endswith(".0") else [])
    for name in variants:
        # "1.2", "v1.2", "[1.2]", "Version 1.2 (date)"; not "1.2.1" nor "11.2"
        pattern = re.compile(rf"(?<![\w.])[vV]?{re.escape(name)}(?![\w]|\.\d)")
        for i, line in enumerate(lines):
            text = line.strip()
            if not text or len(text) > 120 or re.match(r"[-*+] ", text):
                continue
            if pattern.search(text):
                return i
    return None


def changelog_section(text: str, newer: str, older: str) -> str | None:
    """The changelog's lines between ``older``'s and ``newer``'s headings (newest first);
    from the top to ``older``'s heading when ``newer`` has none (an unreleased section);
    oldest first, everything after ``older``'s heading (its own notes included: where a
    section ends is not told); ``None`` when ``older`` has no heading."""
    lines = text.splitlines()
    old = _heading(lines, older)
    if old is None:
        return None
    new = _heading(lines, newer)
    if new is None:
        return "\n".join(lines[:old])
    return "\n".join(lines[new:old]) if new < old else "\n".join(lines[old + 1 :])


def mentions_fix(section: str) -> bool:
    return bool(_FIX_WORDS.search(section))


def names_function(section: str, function: str) -> bool:
    """Whether the section names the function (its own name; for a method, the method's
    name)."""
    name = function.rpartition(".")[2]
    return bool(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", section))


# -- candidates ----------------------------------------------------------------------


def _without_docstrings(text: str) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def changed_lines(before: str, after: str) -> int:
    """Lines removed plus lines added between two texts."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
    return sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name ``tree`` binds anywhere (generous: what a module or function defines)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
    return names


def _mentioned(tree: ast.AST) -> set[str]:
    """Every name, attribute and string ``tree`` holds (``__slots__``, ``getattr``)."""
    found = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | _bound_names(tree)
    strings = (n for n in ast.walk(tree) if isinstance(n, ast.Constant))
    return found | {n.value for n in strings if isinstance(n.value, str)}


def _missing_names(definition: str, module: ast.Module, cls: str = "") -> list[str]:
    """Names ``definition`` reads that neither it, ``module`` nor the builtins define,
    and private attributes it reads from ``self``/``cls`` that ``module`` never mentions
    (a helper method a refactoring removed: ``self.__touch``; a mangled ``__name`` must
    be mentioned in the method's own class ``cls``). A module that star-imports cannot
    be told about names."""
    tree = ast.parse(definition)
    missing: set[str] = set()
    if not any(isinstance(n, ast.ImportFrom) and n.names[0].name == "*" for n in module.body):
        known = _bound_names(tree) | _bound_names(module) | set(dir(builtins)) | {"__class__"}
        loads = (n for n in ast.walk(tree) if isinstance(n, ast.Name))
        missing |= {n.id for n in loads if isinstance(n.ctx, ast.Load)} - known
    mentioned = _mentioned(module)
    owner = [n for n in module.body if isinstance(n, ast.ClassDef) and n.name == cls]
    in_class = _mentioned(owner[0]) if owner else mentioned
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
            and node.attr.startswith("_")
            and not node.attr.endswith("__")
            and node.attr not in (in_class if node.attr.startswith("__") else mentioned)
        ):
            missing.add(f"{node.value.id}.{node.attr}")
    return sorted(missing)


def _module_path(path: str, import_paths: Sequence[str]) -> str:
    """``path`` below its import root (``src/pkg/mod.py`` -> ``pkg/mod.py``)."""
    parts = PurePosixPath(path).parts
    for root in sorted((PurePosixPath(r).parts for r in import_paths), key=len, reverse=True):
        if root and parts[: len(root)] == root:
            return "/".join(parts[len(root) :])
    return path


def _earlier_file(path: str, module_path: str, earlier: dict[str, str]) -> str | None:
    """The file of the earlier release holding the module at ``path`` (moved or not)."""
    if path in earlier:
        return path
    moved = sorted(
        (p for p in earlier if p == module_path or p.endswith("/" + module_path)),
        key=lambda p: (p.count("/"), p),
    )
    return moved[0] if moved else None


@dataclass
class _Candidate:
    file: str
    function: str
    release: Release
    from_file: str
    definition: str
    changed: dict[str, str]
    names_function: bool
    lines: int


def _release_candidates(
    prepared: PreparedProject,
    modules: Sequence[str],
    release: Release,
    earlier: dict[str, str],
    section: str | None,
    seen: set[tuple[str, str, str]],
    stats: RevertStats,
) -> list[_Candidate]:
    """The candidates of one earlier release: every function whose code differs counts;
    those past the checks (the changelog section mentions a fix, the difference is small,
    the definition fits V's module) are returned."""
    fix_mentioned = section is not None and mentions_fix(section)
    out: list[_Candidate] = []
    import_paths = prepared.layout.import_paths
    for path in modules:
        from_file = _earlier_file(path, _module_path(path, import_paths), earlier)
        if from_file is None:
            continue
        try:
            now, then = cst.parse_module(prepared.files[path]), cst.parse_module(earlier[from_file])
            now_tree = ast.parse(prepared.files[path])
        except (cst.ParserSyntaxError, SyntaxError, RecursionError):
            continue
        old_names = set(function_names(then))
        for function in function_names(now):
            if function not in old_names:
                continue
            new_text, old_text = _definition(now, function), _definition(then, function)
            try:
                if _without_docstrings(new_text) == _without_docstrings(old_text):
                    continue
            except SyntaxError:
                continue
            stats.candidates += 1
            stats.releases[release.version]["candidates"] += 1
            if not fix_mentioned:
                stats.drop("no_changelog_fix")
                continue
            lines = changed_lines(new_text, old_text)
            if lines > MAX_CHANGED_LINES:
                stats.drop("too_large")
                continue
            if _missing_names(old_text, now_tree, function.rpartition(".")[0]):
                stats.drop("missing_name")
                continue
            try:
                part = {"file": path, "function": function, "definition": old_text}
                changed = apply_parts(prepared.files, [part])[path]
                compile(changed, path, "exec")
            except (cst.ParserSyntaxError, SyntaxError, ValueError, KeyError):
                stats.drop("does_not_parse")
                continue
            key = (path, function, old_text)
            if key in seen:
                stats.drop("duplicate")
                continue
            seen.add(key)
            named = names_function(section or "", function)
            out.append(
                _Candidate(
                    path, function, release, from_file, old_text, {path: changed}, named, lines
                )
            )
    return out


def _entry(
    candidate: _Candidate,
    record: dict[str, Any],
    sha256: str,
    changelog: str,
    f2p: list[str],
    p2p: list[str],
    files: list[str],
    shown: dict[str, str],
    doc: str,
    function_lines: int,
) -> dict[str, Any]:
    project, version = record["project"], record["version"]
    features = {
        "n_fail": len(f2p),
        "operator": KIND,
        "function_lines": function_lines,
        "distance": min(_distance(candidate.file, t) for t in f2p),
        "changed_lines": candidate.lines,
    }
    part = {
        "file": candidate.file,
        "function": candidate.function,
        "from_version": candidate.release.version,
        "from_sha256": candidate.release.sha256,
    }
    if candidate.from_file != candidate.file:
        part["from_file"] = candidate.from_file
    return {
        "id": f"real/{project}/{version}/{KIND}/{candidate.file}::{candidate.function}"
        f"@{candidate.release.version}",
        "project": project,
        "version": version,
        "sha256": sha256,
        "kind": KIND,
        # what single-mutant readers use: the statement's title and the behaviour checks
        # name the function; the operator names the kind (never applied as a mutation)
        "file": candidate.file,
        "mutation": [candidate.function, KIND, 0],
        "reverts": [part],
        "changelog": {"file": changelog, "names_function": candidate.names_function},
        "shown": sorted(shown),
        "f2p": f2p,
        "p2p": p2p,
        "report": _report(project, candidate.file, candidate.function, doc, shown),
        "features": features,
        "modules": files,
        "level": difficulty_level(features),
    }


ReleaseLister = Callable[[str, str, int], Sequence[Release]]


def _tested_modules(prepared: PreparedProject, record: dict[str, Any]) -> dict[str, list[str]]:
    """Package module -> the test files (not left out) that import it."""
    left_out = set(record.get("left_out", {}))
    tests = [t for t in prepared.test_files if t not in left_out]
    layout = prepared.layout
    by_module: dict[str, list[str]] = {}
    for test, modules in imports_of_tests(prepared.files, layout.import_paths, tests).items():
        for module in modules:
            if (
                is_package_source(module, layout.import_paths)
                and not is_test_support(module)
                and not layout.is_test_file(module)
            ):
                by_module.setdefault(module, []).append(test)
    return {m: sorted(ts) for m, ts in sorted(by_module.items())}


def _validate(
    candidates: list[_Candidate],
    prepared: PreparedProject,
    record: dict[str, Any],
    tested: dict[str, list[str]],
    changelog: str,
    runner: Any,
    stats: RevertStats,
) -> list[dict[str, Any]]:
    """Run each candidate's tests in the sandbox; the entries of those kept."""
    passing = set(record["passing"])
    out: list[dict[str, Any]] = []
    for start in range(0, len(candidates), _BATCH):
        batch = candidates[start : start + _BATCH]
        variants = [(c.changed, tested[c.file]) for c in batch]
        results = _run_sandbox(runner, prepared, variants, float(record["time_limit_s"]))
        for candidate, result in zip(batch, results, strict=True):
            if result is None or result.status is not RunStatus.COMPLETED:
                stats.drop("run")
                continue
            f2p = sorted(t for t, ok in result.verdicts.items() if not ok and t in passing)
            if not f2p:
                stats.drop("no_failure")
                continue
            messages = {r.nodeid: _stable(r.message) for r in result.records}
            files = sorted({t.split("::", 1)[0] for t in f2p})
            p2p = [t for t in sorted(passing) if t.split("::", 1)[0] in files and t not in f2p]
            node = function_node(prepared.files[candidate.file], candidate.function)
            function_lines = len(cst.Module(body=[node]).code.strip().splitlines())
            shown = {f2p[0]: messages.get(f2p[0], "")}
            out.append(
                _entry(
                    candidate,
                    record,
                    record["sha256"],
                    changelog,
                    f2p,
                    p2p,
                    files,
                    shown,
                    _docstring(node),
                    function_lines,
                )
            )
            stats.kept += 1
            stats.kept_naming_function += candidate.names_function
            stats.releases[candidate.release.version]["kept"] += 1
    return out


def revert_project(
    root: Path,
    record: dict[str, Any],
    releases: Sequence[Release],
    cache_dir: Path,
    *,
    max_runs: int = 60,
    runner: Any = None,
    log: Any = None,
) -> tuple[list[dict[str, Any]], RevertStats]:
    """Reverted-fix tasks of the pinned release unpacked at ``root`` (its build
    ``record``) from the earlier ``releases`` (newest first; their sdists fetched into
    ``cache_dir`` when absent). At most ``max_runs`` candidates run in the sandbox
    (those whose changelog section names the function first); the rest are dropped as
    ``over_cap``."""
    from forgegym.sandbox.runners import get_default_runner

    say = log or (lambda message: None)
    project, version = record["project"], record["version"]
    stats = RevertStats(project=project, version=version)
    cpu_start = cpu_seconds()
    prepared = prepare_project(root, requirements=record["requirements"])
    names = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    changelog = find_changelog(names) or ""
    stats.changelog = changelog
    text = (root / changelog).read_text(errors="replace") if changelog else ""
    tested = _tested_modules(prepared, record)
    seen: set[tuple[str, str, str]] = set()
    candidates: list[_Candidate] = []
    for release in releases:
        row: dict[str, Any] = {"candidates": 0, "kept": 0}
        stats.releases[release.version] = row
        section = changelog_section(text, version, release.version) if text else None
        row["changelog"] = (
            "no changelog"
            if not text
            else "no section"
            if section is None
            else "mentions a fix"
            if mentions_fix(section)
            else "no fix mentioned"
        )
        try:
            sdist = _fetch_release(project, release, cache_dir)
        except (OSError, ValueError, ColdCacheError) as exc:
            row["error"] = f"{type(exc).__name__}: {exc}"[:200]
            say(f"{project} {release.version}: {row['error']}")
            continue
        earlier = read_sdist_files(sdist, lambda p: p.endswith(".py"))
        found = _release_candidates(prepared, list(tested), release, earlier, section, seen, stats)
        candidates += found
        say(f"{project} {release.version}: {row['candidates']} differing, {len(found)} to run")
    candidates.sort(key=lambda c: not c.names_function)  # stable: newest release first
    if len(candidates) > max_runs:
        stats.drop("over_cap", len(candidates) - max_runs)
        candidates = candidates[:max_runs]
    out = _validate(
        candidates, prepared, record, tested, changelog, runner or get_default_runner(), stats
    )
    stats.cpu_seconds = cpu_seconds() - cpu_start
    say(f"{project}: {stats.kept} kept of {stats.candidates} candidates")
    return sorted(out, key=lambda e: e["id"]), stats


def revert_bank(
    bank_dir: Path,
    *,
    releases: int = 3,
    projects: Sequence[str] = (),
    cache_dir: Path | None = None,
    max_runs: int = 60,
    lister: ReleaseLister | None = None,
    log: Any = None,
) -> list[RevertStats]:
    """The reverted-fix tasks of every project of a built bank folder (or of
    ``projects``) from its ``releases`` newest earlier releases (``lister``: who lists
    them, default the index's JSON API); writes ``<project>-<version>.reverted.jsonl.gz``
    and its ``.reverted.json`` statistics beside each manifest."""
    from forgegym.tasklib.factory.source import default_cache_dir

    list_releases = lister or pypi_releases

    def step(
        root: Path, entries: list[dict[str, Any]], record: dict[str, Any], cache: Path | None
    ) -> tuple[list[dict[str, Any]], RevertStats, dict[str, Any]]:
        first = entries[0]
        record.setdefault("sha256", first["sha256"])
        earlier = list(list_releases(first["project"], first["version"], releases))
        reverted, stats = revert_project(
            root, record, earlier, cache or default_cache_dir(), max_runs=max_runs, log=log
        )
        return reverted, stats, {"releases_asked": releases, "max_changed_lines": MAX_CHANGED_LINES}

    return each_project(bank_dir, "reverted", step, projects=projects, cache_dir=cache_dir)
