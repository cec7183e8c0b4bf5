"""Robust statistics of the parent's measurement (synthetic CPU times, no timing)."""

from __future__ import annotations

import math

import pytest

from forgegym.envs.performance.measure import (
    EXCESS_LIMIT,
    GROWTH_LIMIT,
    Measurement,
    analyse,
    slope,
    speed_credit,
)

SIZES = [100, 400, 1600]


def _m(null: list[float], ref: list[float], cand: list[float], noise: float = 0.0) -> Measurement:
    def reps(series: list[float]) -> list[list[float]]:
        return [[v * (1 - noise), v, v * (1 + 3 * noise)] for v in series]

    return analyse(
        Measurement(sizes=SIZES, null=reps(null), reference=reps(ref), candidate=reps(cand))
    )


def test_slope_of_a_power_law() -> None:
    assert slope(SIZES, [s**1.0 for s in SIZES]) == pytest.approx(1.0)
    assert slope(SIZES, [3.0, 3.0, 3.0]) == pytest.approx(0.0)


def test_flat_candidate_passes_and_linear_per_operation_fails() -> None:
    null, ref = [0.06, 0.07, 0.08], [0.08, 0.09, 0.11]
    fast = _m(null, ref, [0.09, 0.10, 0.12])
    assert fast.complexity_ok and fast.excess_exponent < EXCESS_LIMIT
    # O(n) per operation: the work grows 16x from n to 16n.
    naive = _m(null, ref, [0.10, 0.25, 0.85])
    assert not naive.complexity_ok and naive.excess_exponent > EXCESS_LIMIT


def test_constant_padding_does_not_hide_a_linear_term() -> None:
    """A thread started per call (measured on TTL: 0.87 s at n against the reference's
    0.04 s) flattens an O(n) implementation's log-log slope under the limit; the
    absolute growth from n to 16n still shows the O(n) term."""
    null, ref = [0.035, 0.040, 0.038], [0.041, 0.043, 0.049]
    padded = _m(null, ref, [0.865, 0.967, 1.597])
    assert padded.excess_exponent < EXCESS_LIMIT
    assert padded.excess_growth > GROWTH_LIMIT and not padded.complexity_ok
    # The same O(n) work unpadded fails both gates.
    naive = _m(null, ref, [0.058, 0.123, 0.534])
    assert naive.excess_exponent > EXCESS_LIMIT and naive.excess_growth > GROWTH_LIMIT


@pytest.mark.parametrize("factor", [1.0, 2.0, 3.0])
def test_a_constant_factor_slower_implementation_passes_both_gates(factor: float) -> None:
    """O(1) per operation, ``factor`` times the reference's work (a linked list against
    ``OrderedDict``): both gates pass, the speed term prices the constant."""
    null, ref = [0.035, 0.036, 0.037], [0.050, 0.056, 0.070]
    cand = [z + factor * (r - z) for z, r in zip(null, ref, strict=True)]
    m = _m(null, ref, cand)
    assert m.complexity_ok, (m.excess_exponent, m.excess_growth)
    assert m.excess_growth <= (factor - 1.0) * 0.5 + 1e-9


def test_one_outlier_repetition_does_not_flip_the_verdict() -> None:
    null, ref = [0.06, 0.07, 0.08], [0.08, 0.09, 0.11]
    m = Measurement(
        sizes=SIZES,
        null=[[v] * 3 for v in null],
        reference=[[v] * 3 for v in ref],
        candidate=[[0.09, 0.09, 0.09], [0.10, 0.10, 0.10], [0.12, 0.12, 0.9]],
    )
    assert analyse(m).complexity_ok  # the median ignores the one slow run


def test_timeouts_and_missing_runs_fail_the_gate() -> None:
    m = _m([0.06] * 3, [0.08] * 3, [0.09] * 3)
    m.candidate_timeouts = 1
    assert not m.complexity_ok
    incomplete = analyse(Measurement(sizes=SIZES, null=[[0.1]] * 3, reference=[[0.1]] * 3))
    assert not incomplete.complexity_ok and math.isnan(incomplete.speed_ratio)


def test_speed_ratio_is_total_cpu_and_work_ratio_subtracts_the_null() -> None:
    m = _m([0.05, 0.05, 0.05], [0.07, 0.07, 0.07], [0.09, 0.09, 0.09])
    assert m.speed_ratio == pytest.approx(0.07 / 0.09)
    assert m.work_ratio == pytest.approx(0.02 / 0.04)


def test_speed_credit_is_capped_and_logarithmic() -> None:
    assert speed_credit(2.0) == speed_credit(0.95) == 1.0
    assert speed_credit(0.01) == 0.0
    assert 0.0 < speed_credit(0.25) < speed_credit(0.5) < 1.0
    # equal steps in log(ratio) give equal steps in credit
    assert speed_credit(0.4) - speed_credit(0.2) == pytest.approx(
        speed_credit(0.8) - speed_credit(0.4)
    )
