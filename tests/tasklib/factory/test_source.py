"""Unpacked sdists: a shared tree that something ran in is not the project any more."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from forgegym.tasklib.factory.source import sdist_paths, unpack_sdist, unpacked_intact

FILES = {
    "demo-1.0/pkg/__init__.py": b"",
    "demo-1.0/pkg/mod.py": b"def f():\n    return 1\n",
    "demo-1.0/tests/test_mod.py": b"from pkg.mod import f\n\ndef test_f():\n    assert f() == 1\n",
    "demo-1.0/tests/__pycache__/test_mod.cpython-311.pyc": b"stale bytecode shipped",
}


def _sdist(tmp_path: Path) -> Path:
    path = tmp_path / "demo-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in FILES.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("demo-1.0/docs")
        link.type, link.linkname = tarfile.SYMTYPE, "tests"
        archive.addfile(link)
    return path


def test_a_fresh_unpack_is_intact_and_an_outputs_file_is_not(tmp_path: Path) -> None:
    sdist = _sdist(tmp_path)
    root = unpack_sdist(sdist, tmp_path / "out")
    assert "docs" in sdist_paths(sdist) and "pkg/mod.py" in sdist_paths(sdist)
    assert unpacked_intact(root, sdist)  # a link to a folder and shipped bytecode included
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"x")
    assert unpacked_intact(root, sdist)  # bytecode an import wrote is not the project
    (root / "range_check.html").write_text("<html>")  # a test's output, left behind
    assert not unpacked_intact(root, sdist)
    (root / "range_check.html").unlink()
    (root / "pkg" / "mod.py").unlink()
    assert not unpacked_intact(root, sdist)


def test_the_real_bank_unpacks_a_touched_tree_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forgegym.envs.bugfix import real

    sdist = _sdist(tmp_path)
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    monkeypatch.setattr(real, "fetch_sdist", lambda *a, **k: (sdist, "ab" * 32))
    entry = {"project": "demo", "version": "1.0", "sha256": "ab" * 32}
    root = real.materialise_project(entry)
    (root / ".hypothesis").mkdir()
    (root / ".hypothesis" / "examples").write_text("a database a test run left")
    again = real.materialise_project(entry)
    assert again == root and not (root / ".hypothesis").exists()
    assert unpacked_intact(again, sdist)
    assert [p.name for p in (tmp_path / "projects").iterdir()] == [root.name]  # no litter
