"""Brier propriety and ROUGE-L values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forgegym.rewards import brier_reward, expected_brier_reward, rouge_l

GRID = [i / 100 for i in range(101)]


def _expected_absolute(q: float, p: float) -> float:
    return p * (1 - abs(q - 1)) + (1 - p) * (1 - abs(q - 0))


def test_brier_values() -> None:
    assert brier_reward(1.0, True) == 1.0
    assert brier_reward(1.0, False) == 0.0
    assert brier_reward(0.7, True) == pytest.approx(0.91)
    assert brier_reward(0.7, False) == pytest.approx(0.51)
    with pytest.raises(ValueError, match="^confidence: "):
        brier_reward(1.2, True)


@settings(max_examples=50)
@given(st.sampled_from(GRID))
def test_brier_expected_reward_is_maximised_at_the_true_probability(p: float) -> None:
    best = max(GRID, key=lambda q: expected_brier_reward(q, p))
    assert best == pytest.approx(p)


@pytest.mark.parametrize("p", [0.6, 0.7, 0.9])
def test_absolute_error_rewards_overconfidence_but_brier_does_not(p: float) -> None:
    best_abs = max(GRID, key=lambda q: _expected_absolute(q, p))
    best_brier = max(GRID, key=lambda q: expected_brier_reward(q, p))
    assert best_abs == 1.0  # the seeds' 1-|q-y| pushes to certainty
    assert best_brier == pytest.approx(p)
    assert expected_brier_reward(p, p) > expected_brier_reward(1.0, p)


def test_rouge_l_known_values() -> None:
    assert rouge_l("the cat sat on the mat", "the cat sat on the mat") == 1.0
    # LCS 3 of candidate 3 tokens and reference 6 tokens: P=1, R=0.5, F=2/3.
    assert rouge_l("the cat sat", "the cat sat on the mat") == pytest.approx(2 / 3)
    assert rouge_l("dog barks", "the cat sat") == 0.0
    # LCS is in-order: "a b c" vs "c b a" shares one token in sequence.
    assert rouge_l("a b c", "c b a") == pytest.approx(1 / 3)


def test_rouge_l_empty_strings() -> None:
    assert rouge_l("", "") == 1.0
    assert rouge_l("", "reference text") == 0.0
    assert rouge_l("candidate", "") == 0.0
    assert rouge_l("...", "!!") == 1.0


@given(st.text(max_size=60), st.text(max_size=60))
def test_rouge_l_in_unit_interval(a: str, b: str) -> None:
    assert 0.0 <= rouge_l(a, b) <= 1.0
