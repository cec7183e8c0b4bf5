"""The manifest index: entries read on demand equal the manifest's, from a cached index."""

from __future__ import annotations

from pathlib import Path

import pytest

from forgegym.envs.bugfix.real import REAL_BANK_DIR
from forgegym.tasklib.factory.manifest import read_manifest, write_manifest
from forgegym.tasklib.factory.manifest_index import ManifestIndex


def _entry(project: str, n: int, level: int = 1) -> dict:
    return {
        "id": f"real/{project}/{n}",
        "level": level,
        "project": project,
        "version": "1.0",
        "f2p": [f"tests/test_{n}.py::test_x"],
        "note": "é" * n,  # multi-byte text: byte offsets, not characters
    }


@pytest.fixture
def index_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "index"
    monkeypatch.setenv("FORGEGYM_INDEX_DIR", str(folder))
    return folder


def test_entries_on_demand_equal_the_manifests(tmp_path: Path, index_dir: Path) -> None:
    first, second = tmp_path / "a-1.0.jsonl.gz", tmp_path / "b-1.0.jsonl"
    write_manifest(first, [_entry("a", n, level=1 + n % 3) for n in range(5)])
    write_manifest(second, [_entry("b", n) for n in range(3)])
    index = ManifestIndex([first, second])
    assert len(index) == 8 and "real/a/4" in index and "real/c/0" not in index
    assert index.projects() == {("a", "1.0"): 5, ("b", "1.0"): 3}
    for entry in read_manifest(first) + read_manifest(second):
        assert index.entry(entry["id"]) == entry
        assert index.indexed(entry["id"]).level == entry["level"]
    assert len(list(index_dir.iterdir())) == 2  # one cached index per manifest
    cached = ManifestIndex([first, second])  # read from the cache
    assert cached.ids() == index.ids()
    assert cached.entry("real/a/3") == index.entry("real/a/3")


def test_a_rewritten_manifest_is_indexed_again(tmp_path: Path, index_dir: Path) -> None:
    path = tmp_path / "a-1.0.jsonl.gz"
    write_manifest(path, [_entry("a", n) for n in range(3)])
    ManifestIndex([path])
    index = ManifestIndex([path])  # from the cache: nothing decompressed yet
    # rewritten while in use (the byte ranges moved): the entry is found again
    write_manifest(path, [_entry("a", 9), *(_entry("a", n) for n in range(3))])
    assert index.entry("real/a/2") == _entry("a", 2)
    assert ManifestIndex([path]).entry("real/a/9") == _entry("a", 9)  # a new index


def test_the_shipped_manifests_read_the_same_through_the_index(index_dir: Path) -> None:
    files = sorted(REAL_BANK_DIR.glob("*.jsonl.gz"))[:6]
    index = ManifestIndex(files)
    for file in files:
        entries = read_manifest(file)
        for entry in (entries[0], entries[-1]):
            assert index.entry(entry["id"]) == entry
