"""Pass rates, potential-based shaping and regressions."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgegym.rewards import compose, pass_rate, potential, regression, shaping

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_pass_rate_counts_only_true() -> None:
    assert pass_rate({"a": True, "b": False, "c": True, "d": False}) == 0.5
    assert pass_rate({"a": True, "skipped": None}) == 0.5  # type: ignore[dict-item]
    assert pass_rate({}) == 0.0


def test_potential_is_square() -> None:
    assert potential(0.5) == 0.25
    assert potential(1.0) == 1.0
    with pytest.raises(ValueError, match="^p: "):
        potential(1.5)


def test_shaping_value() -> None:
    assert shaping(0.5, 1.0) == pytest.approx(0.75)
    assert shaping(1.0, 0.5) == pytest.approx(-0.75)
    assert shaping(0.5, 0.5, gamma=0.5) == pytest.approx(-0.125)
    with pytest.raises(ValueError, match="^gamma: "):
        shaping(0.0, 1.0, gamma=1.5)
    with pytest.raises(ValueError, match="^prev_p: "):
        shaping(-0.1, 1.0)


@given(st.lists(unit, min_size=2, max_size=30))
def test_shaping_telescopes_over_an_episode(rates: list[float]) -> None:
    total = sum(shaping(a, b) for a, b in pairwise(rates))
    assert total == pytest.approx(potential(rates[-1]) - potential(rates[0]), abs=1e-9)


@given(unit, unit)
def test_shaping_fits_a_shaping_term(a: float, b: float) -> None:
    value = shaping(a, b)
    assert -1.0 <= value <= 1.0
    compose({"hidden": 0.0, "shaping": value}, {"hidden": 1.0, "shaping": 1.0})


def test_oscillation_earns_nothing_under_shaping() -> None:
    # Breaking and re-fixing a test repeatedly must not be a source of reward.
    rates = [0.5, 1.0, 0.5, 1.0, 0.5, 1.0]
    direct = shaping(0.5, 1.0)
    assert sum(shaping(a, b) for a, b in pairwise(rates)) == pytest.approx(direct)


def test_regression_counts_broken_and_missing_previously_passing_tests() -> None:
    before = {"a": True, "b": True, "c": True, "d": False}
    after = {"a": True, "b": False, "d": True}  # c disappeared
    assert regression(before, after) == pytest.approx(2 / 3)
    assert regression(before, before) == 0.0
    assert regression({"x": False}, {}) == 0.0
    assert regression({"a": True}, {"a": None}) == 1.0  # type: ignore[dict-item]
