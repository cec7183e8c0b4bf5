"""Reduced runs of benchmarks/curriculum.py (the full table is `python benchmarks/curriculum.py`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).parents[2] / "benchmarks" / "curriculum.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("forgegym_bench_curriculum", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_learners_vary_across_seeds_and_hide_broken_tasks(bench) -> None:
    a, b = bench.draw_params("multi_skill", 0), bench.draw_params("multi_skill", 1)
    assert a.skills == 3 and a.transfer > 0 and a.decay > 0
    assert a.lr != b.lr and a.skill_offsets != b.skill_offsets
    noisy = bench.draw_params("noisy", 0)
    bank = bench.SimBank(noisy, 0)
    broken = bank.broken != 0
    assert 0.05 < broken.mean() < 0.3
    assert {1, 2} <= set(np.unique(bank.broken))  # never- and always-solved tasks
    # Labels are noisy: the latent difficulty is not monotone in the reported level.
    assert (np.diff(bank.latent.mean(axis=1)) > 0).all()
    assert bank.latent[3].min() < bank.latent[1].max()


def test_ours_beats_uniform_and_the_fixed_band(bench) -> None:
    results = bench.run_curriculum_bench(
        3, learners=("one_skill",), rules=("uniform", "fixed_band", "ours"), budget=30_000
    )["one_skill"]
    median = {rule: bench.median_rollouts(runs, 0.8, 8, 30_000) for rule, runs in results.items()}
    assert np.isfinite(median["ours"])
    assert median["ours"] <= 0.75 * median["fixed_band"]  # >= 25% fewer rollouts
    assert 2 * median["ours"] <= median["uniform"]


def test_broken_tasks_are_retired(bench) -> None:
    for seed in (0, 1):
        run = bench.simulate("noisy", "ours", seed, budget=8_000, keep_draws=True)
        repeat, every = run.broken_shares(warmup=1_000)
        bank = bench.SimBank(bench.draw_params("noisy", seed), seed)
        # After each task's first (identifying) draw, under 2% of draws go to broken tasks,
        assert repeat < 0.02
        # and overall far fewer than their share of the bank.
        assert every < 0.6 * (bank.broken != 0).mean()


def test_quick_mode_prints_every_row(bench, capsys) -> None:
    rows = bench.main(["--quick", "--learners", "noisy"])
    assert len(rows) == len(bench.TARGETS) * len(bench.KS)
    assert all(set(row["medians"]) == set(bench.RULES) for row in rows)
    out = capsys.readouterr().out
    assert "level_up" in out and "broken tasks" in out


def test_closing_notes_explain_rows_under_the_bar(bench) -> None:
    rows = [
        {"learner": "a", "saving": 0.25, "oracle_saving": 0.4},
        {"learner": "a", "saving": 0.31, "oracle_saving": 0.4},
        {"learner": "b", "saving": 0.03, "oracle_saving": 0.12},
        {"learner": "c", "saving": 0.15, "oracle_saving": 0.35},
    ]
    a, b, c = bench.closing_notes(rows)
    assert a.startswith("a: ours saves 25%-31%") and "all 2 rows >= 20%" in a
    assert "oracle saves 12%" in b and "the bound, not the rule" in b
    assert "short of the bar" in c


def test_saving_and_loading_mid_run_changes_nothing_on_the_noisy_learner(bench, tmp_path) -> None:
    # The default scheduler on the benchmark's noisy bank (GRPO groups, level prior,
    # retirements): a run saved and loaded half-way draws exactly what a straight run does.
    from forgegym.curricula import CurriculumScheduler

    params = bench.draw_params("noisy", 0)
    bank = bench.SimBank(params, 0)

    def drive(scheduler, student, rng, n):
        draws = []
        for _ in range(n):
            task_id = scheduler.next_task()
            successes = int(rng.binomial(params.group, student.success_probability(task_id)))
            scheduler.record(task_id, successes, params.group)
            student.train(task_id, successes)
            draws.append(task_id)
        return draws

    straight = CurriculumScheduler(bank)
    full = drive(straight, bench.SimLearner(params, bank, 0), np.random.default_rng(5), 120)
    first = CurriculumScheduler(bank)
    student, rng = bench.SimLearner(params, bank, 0), np.random.default_rng(5)
    head = drive(first, student, rng, 60)
    resumed = CurriculumScheduler.load(first.save(tmp_path / "mid.json"), bank)
    tail = drive(resumed, student, rng, 60)
    assert head + tail == full
    assert resumed.state_dict() == straight.state_dict()
    assert straight.tier_sizes()["too_hard"] > 0  # the run did retire tasks
