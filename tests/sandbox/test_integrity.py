"""When the harness compares every guarded global with its snapshot (design note 004,
D13): never sooner than ``FULL_CHECK_INTERVAL_S`` of the job's CPU after the last
comparison, and never so often that the comparisons take more than
``FULL_CHECK_SHARE`` of it."""

from __future__ import annotations

import pytest

from forgegym.sandbox.integrity import FULL_CHECK_INTERVAL_S, FULL_CHECK_SHARE, next_full_check


def test_a_cheap_comparison_waits_the_interval() -> None:
    assert next_full_check(1.0, 1.0001) == pytest.approx(1.0001 + FULL_CHECK_INTERVAL_S)


@pytest.mark.parametrize("cost_s", [0.0008, 0.002, 0.05])
def test_a_costly_comparison_keeps_its_share_of_the_cpu(cost_s: float) -> None:
    began = 3.0
    due = next_full_check(began, began + cost_s)
    assert cost_s / (due - began) <= FULL_CHECK_SHARE + 1e-12
    assert due - (began + cost_s) >= FULL_CHECK_INTERVAL_S
