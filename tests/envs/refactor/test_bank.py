"""The shipped manifest and the bank built on it (no sandbox runs)."""

from __future__ import annotations

import numpy as np
import pytest

from forgegym.core.task import UnknownTaskError
from forgegym.envs.refactor.bank import RefactorTaskBank, bank_stats, find_spec, load_manifest


@pytest.fixture(scope="module")
def bank() -> RefactorTaskBank:
    return RefactorTaskBank()


def test_manifest_serves_500_validated_tasks_of_six_kinds_at_three_levels(
    bank: RefactorTaskBank,
) -> None:
    manifest = load_manifest()
    assert len(bank) == len(manifest["tasks"]) >= 500
    assert len(bank.category_counts()) >= 6
    assert "refactor/split_package/stats/seed" in {e["task_id"] for e in manifest["tasks"]}
    levels = {e["level"] for e in manifest["tasks"]}
    assert levels == {1, 2, 3}
    for entry in manifest["tasks"]:
        record = entry["validation"]
        assert record["kill_rate"] >= 0.9, entry["task_id"]
        assert record["killed"] <= record["detectable"] <= record["mutants"]
        assert record["reference_score"] >= 0.95 and record["noop_score"] <= 0.10
    stats = bank_stats(bank)
    assert stats["mutant_kill>=90%"] == len(bank)
    assert stats["mutant_kill_min_pct"] >= 90


def test_manifest_is_not_stale(bank: RefactorTaskBank) -> None:
    """Each kind's first task rebuilds with the same original and checks the manifest
    validated (a changed corpus module or generator would break this)."""
    seen: set[str] = set()
    for entry in load_manifest()["tasks"]:
        if entry["kind"] in seen:
            continue
        seen.add(entry["kind"])
        assert find_spec(entry["task_id"]).origin_key == entry["origin_key"], entry["task_id"]


def test_get_is_deterministic_and_hides_grading_data(bank: RefactorTaskBank) -> None:
    task_id = bank.task_ids(1, seed=3)[0]
    first, second = bank.get(task_id), bank.get(task_id)
    assert first == second
    hidden = first.hidden
    assert [len(s) for s in hidden["checks"]] == [len(s) for s in hidden["expected"]]
    for path, text in first.files.items():
        assert "expected" not in path
        assert '"o":' not in text


def test_sampling_and_ids(bank: RefactorTaskBank) -> None:
    assert bank.task_ids(5, seed=1) == bank.task_ids(5, seed=1)
    task = bank.sample(np.random.default_rng(0), difficulty=3)
    assert task.difficulty == 3 and task.family == "refactor"
    with pytest.raises(UnknownTaskError):
        bank.get("refactor/split_package/stats/d9v9")
    with pytest.raises(ValueError, match="kinds"):
        RefactorTaskBank(kinds=["nope"])
    only = RefactorTaskBank(kinds=["dead_code"])
    assert set(only.category_counts()) == {"dead_code"}
