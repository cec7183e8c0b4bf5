"""``write_atomic``: what the shared caches rely on (whole files, readable, no litter)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from forgegym.sandbox.atomic import write_atomic


def test_writes_text_and_bytes_creating_the_folders(tmp_path: Path) -> None:
    text = write_atomic(tmp_path / "a" / "b" / "index.json", '{"é": 1}')
    raw = write_atomic(tmp_path / "code.bin", b"\x00\x01")
    assert text.read_bytes() == '{"é": 1}'.encode() and raw.read_bytes() == b"\x00\x01"
    # readable by the sandbox's confined user, not mkstemp's owner-only 0600
    assert stat.S_IMODE(os.stat(text).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(write_atomic(tmp_path / "p", b"", mode=0o600)).st_mode) == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_scratch(tmp_path: Path) -> None:
    target = write_atomic(tmp_path / "cache.json", "old")
    with pytest.raises(TypeError):
        write_atomic(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json"]


def test_concurrent_writers_leave_one_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "shared.bin"
    payloads = [bytes([n]) * 200_000 for n in range(8)]
    threads = [threading.Thread(target=write_atomic, args=(target, p)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["shared.bin"]
