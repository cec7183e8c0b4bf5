"""The entries of a bank's manifests, read on demand (:class:`ManifestIndex`).

A real bank's manifests hold about 26 KB of JSON per entry (224 MB for 8,600 entries,
15 MB gzipped): decompressing and parsing every entry cost ``gym.make(..., bank="real")``
about 8 s, while a reset needs one entry. The index keeps, per manifest, each entry's
id, level, project, version and the byte range of its line in the decompressed
manifest; it is computed once per manifest content (its sha256) and cached on disk
(``$FORGEGYM_INDEX_DIR``, else ``~/.cache/forgegym/index``; a cache that cannot be
written only costs the next process the full read). An entry is parsed from its line
when first asked for, the same JSON :func:`~forgegym.tasklib.factory.manifest.read_manifest`
parses.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forgegym.sandbox.atomic import write_atomic

__all__ = ["IndexedEntry", "ManifestIndex", "index_dir"]

#: Bumped when what an index records changes.
_INDEX_VERSION = 1


def index_dir() -> Path:
    """Where manifest indexes are cached: ``$FORGEGYM_INDEX_DIR``, else
    ``~/.cache/forgegym/index``."""
    env = os.environ.get("FORGEGYM_INDEX_DIR")
    return Path(env) if env else Path.home() / ".cache" / "forgegym" / "index"


@dataclass(frozen=True)
class IndexedEntry:
    """What the index knows of one entry without parsing it."""

    entry_id: str
    level: int
    project: str
    version: str
    file: Path
    start: int  # byte range of its line in the decompressed manifest
    end: int


def _decompressed(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def _scan(data: bytes) -> list[list[Any]]:
    """``[id, level, project, version, start, end]`` of every entry line of ``data``."""
    rows: list[list[Any]] = []
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end]
        if line.strip():
            entry = json.loads(line)
            rows.append(
                [entry["id"], int(entry["level"]), entry["project"], entry["version"], start, end]
            )
        start = end + 1
    return rows


class ManifestIndex:
    """Every entry of ``files`` (later files win on a repeated id), parsed on demand.

    ``ids()`` with ``level()``, ``project_of()`` and ``projects()`` need no entry parsed;
    ``entry(id)`` parses the entry's line (decompressing its manifest, the last one kept)
    and keeps the parsed entry.
    """

    def __init__(self, files: list[Path]) -> None:
        self._by_id: dict[str, IndexedEntry] = {}
        self._parsed: dict[str, dict[str, Any]] = {}
        #: the last manifest decompressed (an index computed here keeps its last one)
        self._data: tuple[Path, bytes] | None = None
        self._lock = threading.Lock()
        for file in files:
            for entry_id, level, project, version, start, end in self._rows(file):
                self._by_id[entry_id] = IndexedEntry(
                    entry_id, level, project, version, file, start, end
                )

    def _rows(self, file: Path) -> list[list[Any]]:
        raw = file.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        cache = index_dir() / f"{file.name}-{digest[:32]}.v{_INDEX_VERSION}.json"
        try:
            rows = json.loads(cache.read_text(encoding="utf-8"))
            if isinstance(rows, list) and all(isinstance(r, list) and len(r) == 6 for r in rows):
                return rows
        except (OSError, ValueError):
            pass
        data = gzip.decompress(raw) if file.suffix == ".gz" else raw
        rows = _scan(data)
        self._data = (file, data)
        with contextlib.suppress(OSError):
            write_atomic(cache, json.dumps(rows))
        return rows

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def ids(self) -> list[str]:
        return list(self._by_id)

    def indexed(self, entry_id: str) -> IndexedEntry:
        """The index's record of ``entry_id`` (a ``KeyError`` when unknown)."""
        return self._by_id[entry_id]

    def entry(self, entry_id: str) -> dict[str, Any]:
        """The parsed entry (shared: callers must not modify it)."""
        found = self._parsed.get(entry_id)
        if found is not None:
            return found
        where = self._by_id[entry_id]
        with self._lock:
            if self._data is None or self._data[0] != where.file:
                self._data = (where.file, _decompressed(where.file))
            line = self._data[1][where.start : where.end]
        try:
            entry: dict[str, Any] = json.loads(line)
        except ValueError:
            entry = {}
        if entry.get("id") != entry_id:  # the manifest was rewritten since it was indexed
            entry = self._reread(where)
        self._parsed[entry_id] = entry
        return entry

    def _reread(self, where: IndexedEntry) -> dict[str, Any]:
        """``where``'s entry from its manifest as it is now (rewritten while in use)."""
        data = _decompressed(where.file)
        for *_, start, end in _scan(data):
            entry: dict[str, Any] = json.loads(data[start:end])
            if entry["id"] == where.entry_id:
                return entry
        raise KeyError(f"{where.entry_id}: no longer in {where.file}")

    def projects(self) -> dict[tuple[str, str], int]:
        """Entries per ``(project, version)``, in first-seen order."""
        counts: dict[tuple[str, str], int] = {}
        for item in self._by_id.values():
            key = (item.project, item.version)
            counts[key] = counts.get(key, 0) + 1
        return counts
