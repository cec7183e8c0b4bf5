"""The protocol's statistics: per-task metrics, difficulty weights, intervals that cover."""

from __future__ import annotations

import numpy as np
import pytest

from forgegym.curricula import pass_at_k
from forgegym.play.aggregate import (
    TaskOutcome,
    bootstrap_interval,
    level_weights,
    paired_difference,
    summarise_policy,
)


def _task(family: str, level: int, scores: list[float], name: str = "") -> TaskOutcome:
    return TaskOutcome(
        env_id=f"Forge/{family}",
        task_id=name or f"{family}/{level}/{scores}",
        family=family,
        difficulty=level,
        scores=tuple(scores),
        successes=tuple(s >= 1.0 for s in scores),
    )


def test_level_weights_spread_easy_medium_hard_over_a_familys_levels() -> None:
    assert level_weights([1, 2, 3]) == pytest.approx({1: 0.20, 2: 0.35, 3: 0.45})
    assert level_weights([3, 1, 2], [1, 1, 2]) == pytest.approx({1: 0.25, 2: 0.25, 3: 0.5})
    five = level_weights([1, 2, 3, 4, 5])
    assert list(five.values()) == pytest.approx(np.array([20, 27.5, 35, 40, 45]) / 167.5)
    assert level_weights([7]) == {7: 1.0}
    assert level_weights([1, 2]) == pytest.approx({1: 20 / 65, 2: 45 / 65})
    for bad in ([], [-1, 1, 1], [0, 0, 0], [float("nan"), 1, 1]):
        with pytest.raises(ValueError, match="weights"):
            level_weights([1, 2, 3], bad)
    with pytest.raises(ValueError, match="levels"):
        level_weights([])


def test_per_task_metrics_best_mean_and_unbiased_pass_at_k() -> None:
    task = _task("bugfix", 1, [1.0, 0.25, 0.0, 1.0])
    assert task.value("score") == pytest.approx(0.5625)
    assert task.value("best") == 1.0
    assert task.value("success") == 0.5
    assert task.value("best_success") == 1.0
    assert task.value("pass@2") == pytest.approx(pass_at_k(4, 2, 2)) == pytest.approx(5 / 6)
    with pytest.raises(ValueError, match="metric"):
        task.value("median")


def test_the_aggregate_is_difficulty_weighted_and_each_family_counts_the_same() -> None:
    tasks = [
        # bugfix: level 1 all solved, level 3 all failed; 2 runs each
        _task("bugfix", 1, [1.0, 1.0], "b1"),
        _task("bugfix", 1, [1.0, 0.0], "b2"),
        _task("bugfix", 3, [0.0, 0.0], "b3"),
        # oversight: only level 2 played, many tasks (must not outweigh bugfix)
        *[_task("oversight", 2, [1.0, 1.0], f"o{i}") for i in range(6)],
    ]
    summary = summarise_policy("m", tasks, levels_of={"bugfix": [1, 2, 3], "oversight": [1, 2, 3]})
    families = {c.family: c for c in summary.cells if c.level == "all"}
    # bugfix: levels 1 and 3 present -> weights 20 and 45 renormalised.
    assert families["bugfix"].metrics["best"].value == pytest.approx(20 / 65 * 1.0 + 45 / 65 * 0)
    assert families["bugfix"].metrics["score"].value == pytest.approx(20 / 65 * 0.75)
    assert families["oversight"].metrics["best"].value == 1.0
    expected = (20 / 65 + 1.0) / 2
    assert summary.aggregate.metrics["best"].value == pytest.approx(expected)
    assert summary.aggregate.tasks == 9 and summary.aggregate.runs == 18
    assert summary.min_runs == 2 and "pass@2" in summary.aggregate.metrics
    level_1 = next(c for c in summary.cells if c.family == "bugfix" and c.level == "1")
    assert level_1.metrics["success"].value == 0.75
    assert level_1.metrics["pass@2"].value == 1.0
    iv = level_1.metrics["success"]
    assert iv.low <= iv.value <= iv.high and iv.low < iv.high
    with pytest.raises(ValueError, match="levels_of"):
        summarise_policy("m", tasks, levels_of={"bugfix": [1, 2], "oversight": [2]})


def test_bootstrap_intervals_cover_a_known_success_probability_95_percent_of_the_time() -> None:
    # 400 simulated benchmarks of 80 tasks with success probability 0.3: the 95%
    # interval must contain 0.3 in 93-97% of them (binomial noise of the coverage
    # itself at 400 repetitions: +-1.1%).
    rng = np.random.default_rng(20261201)
    p, tasks, repetitions = 0.3, 80, 400
    covered = 0
    for _ in range(repetitions):
        outcomes = (rng.random(tasks) < p).astype(float)
        interval = bootstrap_interval(outcomes, rng=rng, resamples=500)
        covered += interval.low <= p <= interval.high
    assert 0.93 <= covered / repetitions <= 0.97, covered / repetitions


def test_stratified_intervals_with_runs_cover_the_true_weighted_success() -> None:
    # Tasks of three levels with heterogeneous per-task success probabilities, 3 runs
    # each: the summary's aggregate success interval covers the true weighted mean.
    rng = np.random.default_rng(7)
    level_p = {1: 0.8, 2: 0.5, 3: 0.2}
    truth = 0.20 * 0.8 + 0.35 * 0.5 + 0.45 * 0.2
    covered, repetitions = 0, 150
    for rep in range(repetitions):
        tasks = []
        for level, p in level_p.items():
            for i in range(30):
                q = rng.beta(4 * p, 4 * (1 - p))  # this task's own probability
                runs = rng.random(3) < q
                tasks.append(_task("f", level, [float(r) for r in runs], f"{level}/{i}"))
        summary = summarise_policy("m", tasks, resamples=400, seed=rep, metrics=["success"])
        interval = summary.aggregate.metrics["success"]
        covered += interval.low <= truth <= interval.high
    assert 0.90 <= covered / repetitions <= 0.99, covered / repetitions


def test_paired_difference_uses_the_pairing() -> None:
    rng = np.random.default_rng(3)
    base = rng.random(60)
    a = [_task("f", 1 + i % 3, [float(base[i] + 0.05 > 0.5)], f"t{i}") for i in range(60)]
    b = [_task("f", 1 + i % 3, [float(base[i] > 0.5)], f"t{i}") for i in range(60)]
    same = paired_difference(a, a, names=("a", "a"), metric="score")
    # No task differs: 0, within the exact bound for 60 agreeing tasks (not [0, 0]).
    assert same.difference.value == 0.0 and same.p_value == 1.0
    assert -0.07 < same.difference.low < 0.0 < same.difference.high < 0.07
    better = paired_difference(a, b, names=("a", "b"), metric="score")
    assert better.shared_tasks == 60 and better.difference.value > 0
    # Never worse on a task, better on a few of 60: an interval, not a certainty.
    assert better.difference.low < better.difference.value < better.difference.high
    assert 0.0 < better.p_value < 1.0
    other = [_task("g", 1, [1.0], "x")]
    with pytest.raises(ValueError, match="share no task"):
        paired_difference(a, other)
    with pytest.raises(ValueError, match="pass@2 needs"):
        paired_difference(a, b, metric="pass@2")


# ------------------------------------------------------------------ small samples
def test_single_task_strata_do_not_claim_certainty() -> None:
    # The case: six shared tasks, each alone in its (family, level) stratum,
    # per-task differences from 0.47 to 0.98. A stratified bootstrap read [+0.681, +0.681].
    diffs = [0.47, 0.55, 0.62, 0.71, 0.85, 0.98]
    cells = [(f, lv) for f in ("alpha", "beta") for lv in (1, 2, 3)]
    a = [_task(f, lv, [d], f"{f}/{lv}") for (f, lv), d in zip(cells, diffs, strict=True)]
    b = [_task(f, lv, [0.0], f"{f}/{lv}") for f, lv in cells]
    paired = paired_difference(a, b, names=("reference", "partial"), metric="score")
    x = paired.difference
    assert x.low < x.value < x.high
    assert x.high - x.low > 0.2  # a plain bootstrap over the six gives about [0.57, 0.87]
    assert 0.0 < paired.p_value < 0.05
    summary = summarise_policy("reference", a, metrics=["score"])
    total = summary.aggregate.metrics["score"]
    assert total.low < total.value < total.high


def test_a_policy_that_solves_every_one_of_six_tasks_is_not_certain() -> None:
    tasks = [_task("f", 1 + i % 3, [1.0], f"t{i}") for i in range(6)]
    interval = summarise_policy("ref", tasks, metrics=["score"]).aggregate.metrics["score"]
    assert interval.value == interval.high == 1.0
    # A [0, 1] metric whose mean were below 0.54 shows 6 of 6 at 1.0 less than 2.5% of
    # the time (P(all 6) <= mean^6): the interval says so.
    assert 0.5 < interval.low < 0.6


LEVEL_MEAN = {1: 0.75, 2: 0.5, 3: 0.3}
FAMILY_SHIFT = {"alpha": 0.05, "beta": -0.05, "gamma": 0.0}


def _simulated_evaluation(
    layout: dict[str, tuple[int, int, int]], rng: np.random.Generator
) -> tuple[list[TaskOutcome], list[TaskOutcome]]:
    a: list[TaskOutcome] = []
    b: list[TaskOutcome] = []
    for family, counts in layout.items():
        for level, count in zip((1, 2, 3), counts, strict=True):
            mean = LEVEL_MEAN[level] + FAMILY_SHIFT[family]
            for i in range(count):
                score = float(rng.beta(2 * mean, 2 * (1 - mean)))
                worse = score * float(rng.uniform(0.3, 0.9))  # b keeps 60% on average
                name = f"{family}/{level}/{i}"
                a.append(_task(family, level, [score], name))
                b.append(_task(family, level, [worse], name))
    return a, b


def _truth(layout: dict[str, tuple[int, int, int]]) -> float:
    weights = level_weights([1, 2, 3])
    per_family = [
        sum(weights[lv] * (LEVEL_MEAN[lv] + FAMILY_SHIFT[f]) for lv in (1, 2, 3)) for f in layout
    ]
    return float(np.mean(per_family))


#: 6, 12 and 30 tasks; the first two with single-task strata.
LAYOUTS = {
    6: {"alpha": (1, 1, 1), "beta": (1, 1, 1)},
    12: {"alpha": (1, 2, 3), "beta": (3, 2, 1)},
    30: {"alpha": (1, 4, 5), "beta": (5, 4, 1), "gamma": (3, 3, 4)},
}


@pytest.mark.parametrize("n_tasks", sorted(LAYOUTS))
def test_intervals_cover_95_percent_on_small_simulated_evaluations(n_tasks: int) -> None:
    layout = LAYOUTS[n_tasks]
    assert sum(sum(c) for c in layout.values()) == n_tasks
    truth = _truth(layout)
    rng = np.random.default_rng(n_tasks)
    repetitions = 800
    covered_mean = covered_diff = 0
    for _ in range(repetitions):
        a, b = _simulated_evaluation(layout, rng)
        mean = summarise_policy("a", a, metrics=["score"]).aggregate.metrics["score"]
        covered_mean += mean.low <= truth <= mean.high
        diff = paired_difference(a, b, metric="score").difference
        covered_diff += diff.low <= 0.4 * truth <= diff.high
    for covered in (covered_mean, covered_diff):
        assert 0.90 <= covered / repetitions <= 0.98, (n_tasks, covered / repetitions)
