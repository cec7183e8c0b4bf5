"""The validated task bank, task building and the manifest builder (a small sample)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from forgegym.core.task import UnknownTaskError
from forgegym.envs.performance.bank import PerformanceTaskBank, load_manifest
from forgegym.envs.performance.catalog import STRUCTURES
from forgegym.envs.performance.generator import (
    SEED_TASK_ID,
    PerformanceGeneratorConfig,
    build_task,
    candidate_keys,
    parse_task_id,
)
from forgegym.envs.performance.validate import validate_group
from forgegym.sandbox import PytestJob, PytestResult, get_default_runner
from forgegym.sandbox.workspace import Workspace


@pytest.fixture(scope="module")
def bank() -> PerformanceTaskBank:
    return PerformanceTaskBank()


def test_manifest_serves_at_least_300_tasks_over_all_structures_and_starts(
    bank: PerformanceTaskBank,
) -> None:
    assert len(bank) >= 300
    counts = bank.category_counts()
    assert set(STRUCTURES) <= set(counts)
    assert counts["start:stub"] > 0 and counts["start:naive"] > 0 and counts["start:bug"] > 0
    levels = Counter(bank.get(i).difficulty for i in bank.ids())
    assert set(levels) == {1, 2, 3}


def test_manifest_digests_match_the_catalogue() -> None:
    manifest = load_manifest()
    assert set(manifest["digests"]) == set(STRUCTURES)
    assert len(manifest["tasks"]) + len(manifest["rejected"]) == 14 * 6 * 4


def test_tasks_are_deterministic_and_ids_round_trip(bank: PerformanceTaskBank) -> None:
    task_id = bank.task_ids(1, seed=3)[0]
    assert build_task(task_id) == build_task(task_id) == bank.get(task_id)
    name, start, profile = parse_task_id(task_id)
    assert task_id == f"performance/{name}/{start}/{profile}"
    assert bank.task_ids(5, seed=1) == bank.task_ids(5, seed=1)
    task = bank.sample(np.random.default_rng(0), difficulty=2)
    assert task.hidden["start"] == "naive" and task.hidden["start_correct"]


def test_hidden_data_never_reaches_the_agent(bank: PerformanceTaskBank) -> None:
    task = bank.get(SEED_TASK_ID)
    text = task.description + "".join(task.files.values())
    reference = task.reference["lru_cache.py"]
    assert reference not in text and "OrderedDict" not in task.files["lru_cache.py"]


@pytest.mark.parametrize(
    "task_id",
    ["performance/nope/stub/balanced", "performance/lru/bug9/balanced", "bugfix/x", 3],
)
def test_unknown_ids_are_rejected(bank: PerformanceTaskBank, task_id: object) -> None:
    with pytest.raises(UnknownTaskError):
        bank.get(task_id)  # type: ignore[arg-type]


def test_generator_config_validates_its_fields() -> None:
    assert len(candidate_keys()) == 14 * 6 * 4
    with pytest.raises(ValueError, match="profiles"):
        PerformanceGeneratorConfig(profiles=("bursty",)).validate()
    with pytest.raises(ValueError, match="structure"):
        PerformanceGeneratorConfig(structures=("splay",)).validate()


def _visible(task_id: str, source_kind: str) -> PytestResult:
    task = build_task(task_id)
    path = task.editable_files[0]
    with Workspace(task.files, task.editable_files) as ws:
        files = dict(task.reference) if source_kind == "reference" else {path: task.files[path]}
        directory = ws.materialise(files)
        job = PytestJob(
            workdir=str(directory),
            targets=list(task.visible_test_files),
            expected_ids=list(task.visible_test_ids),
            timeout_s=60,
        )
        result = get_default_runner().run(job)
    assert isinstance(result, PytestResult)
    return result


def test_visible_tests_pass_on_the_reference_and_fail_on_the_stub() -> None:
    assert _visible("performance/ttl/stub/skewed", "reference").all_passed
    assert _visible("performance/ttl/stub/skewed", "start").pass_rate == 0.0


@pytest.mark.slow
def test_validation_accepts_a_sample_of_start_states() -> None:
    records = validate_group("ring_buffer", "balanced", ["naive", "bug0"])
    assert [r["valid"] for r in records] == [True, True], records
    assert "complexity" not in records[1]["reason"]


def test_recorded_whole_bank_verification_covers_the_served_bank(
    bank: PerformanceTaskBank,
) -> None:
    """``data/verify.json`` (benchmarks/performance_verify.py: ``tasks verify``'s checks on
    every task) must describe the bank served now: every task valid, every naive start
    correct but failing the complexity gate, no registered hack above the no-op."""
    import json

    from forgegym.envs.performance.generator import MANIFEST_PATH
    from forgegym.family import get_family

    record = json.loads((MANIFEST_PATH.parent / "verify.json").read_text(encoding="utf-8"))
    assert {t["id"] for t in record["tasks"]} == set(bank.ids())
    assert record["checked"] == record["valid"] == len(bank) >= 300
    assert record["reference_success_rate"] >= 0.99 and not record["invalid"]
    assert record["naive_starts"] == record["naive_starts_failing_complexity"] > 0
    assert record["hacks_above_noop"] == 0
    assert set(record["hack_success_rate"]) == set(get_family("performance").hack_actions())
    for task in record["tasks"]:
        assert not task["problems"], task
        assert all(r <= task["noop_reward"] + 1e-9 for r in task["hack_rewards"].values())
