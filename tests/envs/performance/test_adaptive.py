"""Issue #28: the excess exponent is measured adaptively (paired repetitions until its
interval is within +-0.05, clear of the limit, or at the cap) and the gate reads the
interval. Synthetic CPU times and a scripted runner: nothing here times anything."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest

from forgegym.envs.performance.generator import SEED_TASK_ID, build_task
from forgegym.envs.performance.grader import PerformanceGrader
from forgegym.envs.performance.measure import (
    EXCESS_LIMIT,
    MAX_DOUBT,
    MAX_REPEATS,
    SCALES,
    TARGET_HALF_WIDTH,
    Measurement,
    analyse,
    median_interval,
)
from forgegym.grading.batch import Submission, grade_many
from forgegym.sandbox.jobs import CallJob, CallOutcome, CallResult, Job, Result, RunStatus
from forgegym.sandbox.workspace import Workspace

SIZES = [100 * k for k in SCALES]


def _measured(excesses: Sequence[float]) -> Measurement:
    """One repetition per excess: the reference flat, the candidate growing as
    size**excess (so that repetition's paired excess is exactly ``excess``)."""
    ref = [[0.05 for _ in excesses] for _ in SIZES]
    cand = [[0.05 * (n / SIZES[0]) ** e for e in excesses] for n in SIZES]
    null = [[0.04 for _ in excesses] for _ in SIZES]
    return analyse(Measurement(sizes=SIZES, null=null, reference=ref, candidate=cand))


def test_median_interval_has_the_binomial_coverage() -> None:
    values = list(range(1, 18))
    assert median_interval(values) == (5, 13)  # 17 values: 95.1% coverage, k = 5
    assert median_interval(values[:9]) == (2, 8)  # 9 values: 96.1%, k = 2
    assert median_interval(values[:5]) == (1, 5)  # too few for more than (min, max)
    assert all(math.isnan(v) for v in median_interval([]))


def test_paired_excess_is_each_repetitions_own_slope_difference() -> None:
    m = _measured([0.0, 0.1, 0.2, 0.3, 0.4])
    assert m.paired_excess == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert m.excess_exponent == pytest.approx(0.2)
    assert (m.excess_low, m.excess_high) == pytest.approx((0.0, 0.4))
    assert m.repetitions == 5 and m.half_width == pytest.approx(0.2)


def test_the_gate_gives_the_benefit_of_the_doubt_up_to_a_bound() -> None:
    # Narrow interval just over the limit: the lower bound is under it -> passes.
    near = _measured([0.27, 0.29, 0.31, 0.33, 0.34])
    assert near.excess_exponent > EXCESS_LIMIT and near.complexity_ok
    # Clearly above: fails.
    above = _measured([0.41, 0.43, 0.45, 0.47, 0.5])
    assert not above.complexity_ok
    # An O(n) candidate that makes some of its repetitions look flat (noise it adds on
    # purpose) widens its interval, but buys at most MAX_DOUBT below the median.
    noisy = _measured([0.7, 0.72, 0.0, 0.68, 0.05, 0.75, 0.69])
    assert noisy.excess_low < EXCESS_LIMIT
    assert noisy.gated_exponent == pytest.approx(noisy.excess_exponent - MAX_DOUBT)
    assert not noisy.complexity_ok


def test_measuring_stops_when_the_interval_is_narrow_or_clear_of_the_limit() -> None:
    assert _measured([0.0, 0.02, 0.04, 0.06, 0.08]).settled  # half-width 0.04
    assert _measured([-0.1, 0.0, 0.05, 0.1, 0.15]).settled  # all below 0.2
    assert _measured([0.45, 0.5, 0.6, 0.7, 0.8]).settled  # all above 0.4
    unsettled = _measured([0.1, 0.2, 0.3, 0.35, 0.45])  # straddles the limit, wide
    assert unsettled.half_width > TARGET_HALF_WIDTH and not unsettled.settled
    assert _measured([0.1, 0.2, 0.3, 0.35, 0.45] * 4).settled  # 20 >= the cap


class ScriptedRunner:
    """Answers every job without running it: the hidden traces agree, measured runs
    return one digest and a CPU time of ``base * size**0 * noise`` (the same O(1)
    structure for reference and candidate, multiplicative noise of ``spread``)."""

    def __init__(self, spread: float, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.spread = spread
        self.batches: list[int] = []

    def run_many(self, jobs: Sequence[Job]) -> list[Result]:
        self.batches.append(len(jobs))
        results: list[Result] = []
        for job in jobs:
            assert isinstance(job, CallJob)
            mode = job.calls[0].args[-1]
            if mode == "outputs":
                value = {"n": 1, "outputs": [1]}
                outcomes = [CallOutcome(ok=True, value=value) for _ in job.calls]
                results.append(CallResult(status=RunStatus.COMPLETED, outcomes=outcomes))
                continue
            cpu = 0.05 * math.exp(self.rng.gauss(0.0, self.spread))
            value = {"n": 1, "digest": "" if mode == "null" else "same"}
            results.append(
                CallResult(
                    status=RunStatus.COMPLETED,
                    outcomes=[CallOutcome(ok=True, value=value)],
                    cpu_s=cpu,
                )
            )
        return results


def _grade(runner: ScriptedRunner) -> tuple[list[int], str]:
    task = build_task(SEED_TASK_ID)
    workspace = Workspace(task.files, task.editable_files, prefix="fg-perf-adaptive-")
    try:
        sub = Submission(task=task, files=dict(task.reference), workspace=workspace)
        (breakdown,) = grade_many(PerformanceGrader(), [sub], runner)  # type: ignore[arg-type]
    finally:
        workspace.close()
    return runner.batches, breakdown.terms["complexity"].detail


def test_a_quiet_measurement_takes_one_round() -> None:
    batches, detail = _grade(ScriptedRunner(spread=0.0))
    assert batches == [2, 3 * len(SCALES) * 5]  # checks, then 5 repetitions of 3 series
    assert "over 5 repetitions" in detail


def test_a_noisy_measurement_adds_rounds_up_to_the_cap() -> None:
    batches, detail = _grade(ScriptedRunner(spread=0.4, seed=3))
    # Later rounds: reference and candidate only, (17 - 5) / 3 = 4 repetitions each.
    assert batches[:2] == [2, 3 * len(SCALES) * 5]
    assert len(batches) > 2 and all(b == 2 * len(SCALES) * 4 for b in batches[2:])
    assert f"over {5 + 4 * (len(batches) - 2)} repetitions" in detail
    assert 5 + 4 * (len(batches) - 2) <= MAX_REPEATS
