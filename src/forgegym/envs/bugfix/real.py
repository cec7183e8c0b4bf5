"""Bugfix tasks from real projects: the factory's manifest bank (``bank="real"``).

A manifest line (written by ``forgegym tasks build``, :mod:`forgegym.tasklib.factory`)
names a pinned sdist (project, version, sha256), a source file, one mutation and the
tests it breaks. No source is shipped: a task materialises on first use from the cached
sdist (checked against its sha256; fetched from the index when absent, else a
:class:`~forgegym.tasklib.factory.ColdCacheError` naming the file to provide), the
mutation is applied, and the task is graded like every repository task
(:class:`~forgegym.envs.bugfix.repo.RepoGrader`): every fail-to-pass test must pass and
every pass-to-pass test of the touched test modules must keep passing.

What the agent sees: the project's source packages (the mutated file among them,
editable), the touched test modules and the other Python files of their test folders
(read-only), and a bug report with one or two of the failing tests' output.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from forgegym.core.bank import ManifestTaskBank
from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.bugfix.repo import FAMILY, RepoHidden, is_test_support
from forgegym.tasklib.factory import fetch_sdist, read_manifest, unpack_sdist
from forgegym.tasklib.factory.build import LEVELS, import_root
from forgegym.tasklib.factory.source import default_cache_dir
from forgegym.tasklib.mutations import Mutation, apply_mutations

__all__ = ["REAL_BANK_DIR", "RealTaskBank", "materialise_project"]

#: The shipped manifests (one ``<project>-<version>.jsonl.gz`` per project).
REAL_BANK_DIR = Path(__file__).with_name("data") / "real"
_SKIP_TOP = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py"})
_SKIP_DIRS = frozenset({"docs", "doc", "benchmarks", "examples", "build", "dist", "tools"})


def _projects_dir() -> Path:
    env = os.environ.get("FORGEGYM_REAL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "forgegym" / "real"


def materialise_project(
    entry: dict[str, Any], cache_dir: Path | None = None, *, allow_download: bool = True
) -> Path:
    """The unpacked pristine tree of ``entry``'s sdist (unpacked once, then reused)."""
    sdist, digest = fetch_sdist(
        entry["project"],
        entry["version"],
        cache_dir,
        sha256=entry["sha256"],
        allow_download=allow_download,
    )
    target = _projects_dir() / f"{entry['project']}-{entry['version']}-{digest[:12]}"
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


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _task_files(root: Path, entry: dict[str, Any]) -> tuple[dict[str, str], str]:
    """The agent's files (paths relative to the import root) and the mutated file's path."""
    base = import_root(root)
    files: dict[str, str] = {}
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base)
        if rel.parts[0] in _SKIP_DIRS or rel.as_posix() in _SKIP_TOP or "__pycache__" in rel.parts:
            continue
        if is_test_support(rel.as_posix()):
            continue
        files[rel.as_posix()] = _read(path)
    for module in entry["modules"]:
        folder = root / PurePosixPath(module).parent
        for path in sorted(folder.rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if "__pycache__" not in name and PurePosixPath(name).name != "conftest.py":
                files.setdefault(name, _read(path))
    mutated = (root / entry["file"]).relative_to(base).as_posix()
    return files, mutated


def build_real_task(
    entry: dict[str, Any], cache_dir: Path | None = None, *, allow_download: bool = True
) -> Task:
    """The :class:`~forgegym.core.task.Task` of one manifest entry."""
    root = materialise_project(entry, cache_dir, allow_download=allow_download)
    files, mutated = _task_files(root, entry)
    pristine = files[mutated]
    files[mutated] = apply_mutations(pristine, [Mutation.from_json(entry["mutation"])])
    editable = tuple(p for p in sorted(files) if not is_test_support(p))
    hidden = RepoHidden(failing_tests=list(entry["f2p"]), passing_tests=list(entry["p2p"]))
    function = entry["mutation"][0]
    return Task(
        task_id=entry["id"],
        family=FAMILY,
        difficulty=int(entry["level"]),
        title=f"Fix `{function}` in {entry['project']} {entry['version']}",
        description=entry["report"],
        files=files,
        editable_files=editable,
        visible_test_files=tuple(sorted(entry["modules"])),
        visible_test_ids=tuple(entry["collected"]),
        hidden=hidden.model_dump(),
        reference={mutated: pristine},
        metadata={
            "project": entry["project"],
            "version": entry["version"],
            "sha256": entry["sha256"],
            "file": mutated,
            "mutation": list(entry["mutation"]),
            "shown": list(entry["shown"]),
            "features": dict(entry["features"]),
            "n_failing": len(entry["f2p"]),
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
    """

    family = FAMILY
    difficulty_levels: tuple[int, ...] = LEVELS

    def __init__(
        self,
        manifests: Path | str | Iterable[Path | str] = REAL_BANK_DIR,
        *,
        cache_dir: Path | str | None = None,
        allow_download: bool = True,
    ) -> None:
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
        self._entries: dict[str, dict[str, Any]] = {}
        for file in files:
            for entry in read_manifest(file):
                self._entries[entry["id"]] = entry
        if not self._entries:
            raise ValueError(
                f"manifests: no task in {[str(p) for p in paths]}; build some "
                "with `forgegym tasks build --from-pypi NAME==VERSION`"
            )
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.allow_download = allow_download
        super().__init__({i: int(e["level"]) for i, e in self._entries.items()})

    def entry(self, task_id: str) -> dict[str, Any]:
        """The manifest entry of ``task_id`` (a copy)."""
        if task_id not in self._entries:
            raise UnknownTaskError(task_id)
        return json.loads(json.dumps(self._entries[task_id]))

    def projects(self) -> dict[str, int]:
        """Tasks per ``project==version``."""
        counts: dict[str, int] = {}
        for entry in self._entries.values():
            key = f"{entry['project']}=={entry['version']}"
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))

    def build(self, task_id: str) -> Task:
        return build_real_task(
            self._entries[task_id], self.cache_dir, allow_download=self.allow_download
        )
