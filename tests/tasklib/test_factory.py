"""The real-code task factory: a small bank built offline from a vendored project, graded
through the Bugfix env; reproducibility; the cold-cache error."""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.play.policies import NOOP_ACTION
from forgegym.tasklib.factory import (
    ColdCacheError,
    build_pinned,
    fetch_sdist,
    read_manifest,
    sha256_of,
)

CANDIDATES = 10
KEYS = {
    "id",
    "project",
    "version",
    "sha256",
    "file",
    "mutation",
    "shown",
    "f2p",
    "p2p",
    "collected",
    "modules",
    "report",
    "features",
    "level",
}
FIXTURE = Path(__file__).parents[1] / "fixtures" / "factory" / "textkit-1.0"


def _sdist(cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / "textkit-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(
            FIXTURE,
            arcname="textkit-1.0",
            filter=lambda info: None if "__pycache__" in info.name else info,
        )
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    base = tmp_path_factory.mktemp("factory")
    cache = base / "cache"
    _sdist(cache)
    out = base / "bank"
    stats = build_pinned(
        "textkit", "1.0", out, python=sys.executable, cache_dir=cache, seed=3, max_candidates=40
    )
    return cache, out, stats.to_json()


def test_build_keeps_mutants_that_break_tests_and_writes_no_source(built) -> None:
    cache, out, stats = built
    entries = read_manifest(out / "textkit-1.0.jsonl.gz")
    assert stats["confirmed"] == len(entries) >= 3
    assert stats["tests"] == stats["passing"] == 10
    assert stats["killed"] >= stats["kept"] >= stats["confirmed"]
    assert stats["screened"] > stats["killed"]  # some mutants survive (not every one breaks a test)
    sha = sha256_of(cache / "textkit-1.0.tar.gz")
    for entry in entries:
        assert entry["sha256"] == sha and entry["file"] == "textkit/core.py"
        assert entry["f2p"] and set(entry["shown"]) <= set(entry["f2p"])
        assert not set(entry["f2p"]) & set(entry["p2p"])
        assert set(entry["f2p"]) | set(entry["p2p"]) <= set(entry["collected"])
        assert entry["level"] in (1, 2, 3, 4)
        assert entry["shown"][0] in entry["report"]
        # a manifest line carries ids and a report (tracebacks), never a copy of the sources
        assert set(entry) == KEYS and len(entry["report"]) < 4000
        assert entry["report"].count("def ") <= 2 * len(entry["shown"])
    # equivalent mutants are deduplicated: no two tasks fail the same tests the same way
    signatures = [tuple(e["f2p"]) + (e["report"].splitlines()[-3],) for e in entries]
    assert len(set(signatures)) == len(signatures)


def test_same_pins_and_seed_give_the_same_manifest(built, tmp_path: Path) -> None:
    cache, out, _ = built
    again = tmp_path / "again"
    build_pinned(
        "textkit", "1.0", again, python=sys.executable, cache_dir=cache, seed=3, max_candidates=40
    )
    assert (again / "textkit-1.0.jsonl.gz").read_bytes() == (
        out / "textkit-1.0.jsonl.gz"
    ).read_bytes()


def test_built_tasks_grade_reference_as_success_and_noop_as_failure(
    built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, out, _ = built
    monkeypatch.setenv("FORGEGYM_REAL_DIR", str(tmp_path / "projects"))
    bank = RealTaskBank(out, cache_dir=cache, allow_download=False)
    assert bank.projects() == {"textkit==1.0": len(bank.ids())}
    env = gym.make("Forge/Bugfix-v0", task_bank=bank, max_steps=1)
    try:
        for task_id in bank.ids()[:3]:
            task = bank.get(task_id)
            ((path, content),) = task.reference.items()
            assert task.files[path] != content and path in task.editable_files
            fix = json.dumps({"action": "edit", "edits": [{"path": path, "content": content}]})
            (fixed, info), (noop, nothing) = env.unwrapped.grade_completions(
                task_id, [fix, NOOP_ACTION]
            )
            assert env.unwrapped.solved(info), info["reward_breakdown"]
            assert not env.unwrapped.solved(nothing) and noop < fixed
    finally:
        env.close()


def test_cold_cache_and_unreachable_index_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ColdCacheError, match=r"textkit==1\.0 is not in the cache"):
        fetch_sdist("textkit", "1.0", tmp_path / "empty", allow_download=False)
    entry = {"project": "textkit", "version": "1.0", "sha256": "0" * 64, "id": "x", "level": 1}
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps(entry) + "\n")
    bank = RealTaskBank(manifest, cache_dir=tmp_path / "empty", allow_download=False)
    with pytest.raises(ColdCacheError, match="not in the cache"):
        bank.get("x")


def test_a_cached_file_with_another_sha256_is_refused(tmp_path: Path) -> None:
    _sdist(tmp_path)
    with pytest.raises(ValueError, match="is not the pinned"):
        fetch_sdist("textkit", "1.0", tmp_path, sha256="0" * 64, allow_download=False)
