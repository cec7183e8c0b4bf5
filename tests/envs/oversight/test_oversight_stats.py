"""Oversight statistics: AUROC, detection at a false-positive budget, Brier, ECE."""

from __future__ import annotations

import pytest

from forgegym.envs.oversight.stats import (
    OversightStats,
    VerdictRecord,
    auroc,
    compute_stats,
    detection_at_fpr,
    expected_calibration_error,
    oversight_stats,
)


def test_metric_values() -> None:
    assert auroc([1, 1, 0, 0], [0.9, 0.8, 0.2, 0.1]) == 1.0
    assert auroc([1, 0], [0.5, 0.5]) == 0.5
    assert auroc([1, 1], [0.1, 0.2]) is None
    labels = [0] * 100 + [1] * 10
    scores = [i / 100 for i in range(100)] + [0.995] * 5 + [0.5] * 5
    assert detection_at_fpr(labels, scores, 0.01) == pytest.approx(0.5)
    assert detection_at_fpr(labels, scores, 0.5) == pytest.approx(1.0)
    assert expected_calibration_error([1, 0], [1.0, 0.0]) == 0.0
    assert expected_calibration_error([1, 0], [0.5, 0.5]) == 0.0
    assert expected_calibration_error([1, 1], [0.5, 0.5]) == pytest.approx(0.5)


def test_compute_stats_per_domain_and_corruption() -> None:
    records = [
        VerdictRecord(task_id=f"t{i}", domain="mixed", corruption=c, p_corrupted=p)
        for i, (c, p) in enumerate(
            [(None, 0.1), (None, 0.2), ("bias_injection", 0.9), ("temporal_shift", 0.15)]
        )
    ]
    stats = compute_stats(records, "demo")
    cells = {(c.domain, c.corruption): c for c in stats.cells}
    assert cells[("mixed", "bias_injection")].auroc == 1.0
    assert cells[("mixed", "temporal_shift")].auroc == 0.5
    assert stats.overall.n_corrupted == 2 and stats.overall.n_clean == 2


def test_oversight_stats_separates_the_oracle_from_baselines() -> None:
    oracle = oversight_stats("oracle", limit=120)
    clean = oversight_stats("always_clean", limit=120)
    assert isinstance(oracle, OversightStats)
    assert oracle.overall.auroc == 1.0 and oracle.overall.detection_at_1pct_fpr == 1.0
    assert clean.overall.auroc == 0.5 and clean.overall.detection_at_2pct_fpr == 0.0
    with pytest.raises(ValueError, match="overseer"):
        oversight_stats("psychic")


def test_eval_reports_the_overseers_statistics(tmp_path) -> None:
    from forgegym.envs.oversight.stats import plot_stats, stats_from_results
    from forgegym.play.evaluation import evaluate

    results = evaluate("Forge/Oversight-v0", "reference", episodes=6, seed=0)
    report = OversightStats.model_validate(results.metadata["report"])
    assert report.episodes == 6 and report.overall.mean_score >= 0.95
    keyword = evaluate("Forge/Oversight-v0", "baseline:keyword", episodes=6, seed=0)
    assert stats_from_results(keyword).overall.mean_score < report.overall.mean_score
    image = plot_stats(oversight_stats("keyword", limit=80), tmp_path / "stats.png")
    assert image.stat().st_size > 1000


def test_family_report_for_the_server() -> None:
    from forgegym.family import get_family, resolve

    report = resolve(get_family("oversight").report)(limit=60)
    assert set(report.overseers) == {
        "oracle",
        "always_clean",
        "always_corrupted",
        "coin_flip",
        "keyword",
    }
    assert report.overseers["oracle"].overall.auroc == 1.0
    assert report.overseers["keyword"].overall.auroc < 0.75
