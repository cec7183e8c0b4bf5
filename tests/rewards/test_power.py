"""Power as a fraction of the mutants a repaired test still catches."""

from __future__ import annotations

import pytest

from forgegym.rewards.power import POWER_THRESHOLD, power_score


def test_fraction_and_threshold() -> None:
    assert power_score([True] * 5).fraction == 1.0
    kept = power_score([True, True, True, True, False])  # an explicit argument: 4 of 5
    assert kept.fraction == 0.8 and kept.ok and kept.describe() == "4/5 mutants caught (80%)"
    assert power_score([True, True, True, False]).ok  # one in four lost
    dropped = power_score([False, False, True, True, True])  # the order check dropped
    assert dropped.fraction == 0.6 and not dropped.ok
    assert not power_score([False]).ok and power_score([True]).ok
    assert power_score([]).ok and power_score([]).fraction == 1.0
    assert 0.6 < POWER_THRESHOLD <= 0.75


def test_threshold_is_validated() -> None:
    with pytest.raises(ValueError, match="threshold"):
        power_score([True], threshold=0.0)
    assert not power_score([True, False], threshold=1.0).ok
