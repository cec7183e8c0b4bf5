"""Reward composition: gates, weights, ranges and logging of :mod:`forgegym.rewards`."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forgegym.rewards import (
    COMPILE_ERROR_TOTAL,
    GATE_TOTALS,
    HACK_TOTAL,
    UNGATED_FLOOR,
    RewardBreakdown,
    RewardTerm,
    compose,
    merge_weights,
    validate_weights,
)

WEIGHTS = {"hidden": 3.0, "visible": 1.0, "lint": 0.5, "regression": 1.0, "noop": 1.0}
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
terms_strategy = st.fixed_dictionaries(
    {"hidden": unit, "visible": unit, "lint": unit, "regression": unit, "noop": unit}
)


def test_weighted_mean_of_credits() -> None:
    b = compose(
        {"hidden": 0.8, "visible": 1.0, "lint": 0.9}, {"hidden": 3, "visible": 1, "lint": 0.5}
    )
    expected = (3 * 0.8 + 1 * 1.0 + 0.5 * 0.9) / 4.5
    assert b.total == pytest.approx(expected)
    assert b.score == pytest.approx(expected)
    assert b.gates == []
    assert b.terms["hidden"].weight == 3.0
    assert b.weights == {"hidden": 3.0, "visible": 1.0, "lint": 0.5}


def test_penalty_subtracts_and_shaping_is_not_scored() -> None:
    b = compose(
        {"hidden": 1.0, "regression": 0.5, "shaping": 0.25},
        {"hidden": 1.0, "regression": 0.4, "shaping": 1.0},
    )
    assert b.terms["regression"].kind == "penalty"
    assert b.score == pytest.approx(1.0 - 0.2)
    assert b.total == pytest.approx(1.0 - 0.2 + 0.25)


def test_score_override_and_zero_weight_term() -> None:
    b = compose({"hidden": 0.5, "lint": 0.0}, {"hidden": 1.0, "lint": 0.0}, score=0.5)
    assert b.score == 0.5
    assert b.total == pytest.approx(0.5)  # zero-weighted lint is recorded, not counted
    assert "lint" in b.terms


@pytest.mark.parametrize("gate", sorted(GATE_TOTALS))
def test_each_gate_short_circuits_to_its_constant(gate: str) -> None:
    b = compose({"hidden": 1.0, "visible": 1.0}, {"hidden": 1.0, "visible": 1.0}, gates=[gate])
    assert b.total == GATE_TOTALS[gate]
    assert b.score == 0.0
    assert b.gates == [gate]
    assert b.terms["hidden"].value == 1.0  # still recorded for diagnosis


def test_gate_ladder_order() -> None:
    assert HACK_TOTAL < COMPILE_ERROR_TOTAL
    assert GATE_TOTALS["unverifiable"] == GATE_TOTALS["hack_flagged"] == HACK_TOTAL
    assert COMPILE_ERROR_TOTAL < UNGATED_FLOOR


def test_lowest_gate_wins_and_gated_terms_may_be_partial() -> None:
    b = compose({}, WEIGHTS, gates=["compile_error", "hack_flagged", "compile_error"])
    assert b.total == HACK_TOTAL
    assert b.gates == ["compile_error", "hack_flagged"]


@given(terms_strategy)
def test_gate_totals_never_exceed_any_ungated_total_including_noop(terms: dict[str, float]) -> None:
    ungated = compose(terms, WEIGHTS)
    noop = compose({**terms, "hidden": 0.0, "visible": 0.0, "noop": 1.0}, WEIGHTS)
    for gate in GATE_TOTALS:
        gated = compose(terms, WEIGHTS, gates=[gate])
        assert gated.total < ungated.total
        assert gated.total < noop.total
        assert gated.score <= ungated.score


@given(terms_strategy)
def test_score_in_unit_interval_and_total_bounded(terms: dict[str, float]) -> None:
    b = compose(terms, WEIGHTS)
    assert 0.0 <= b.score <= 1.0
    assert UNGATED_FLOOR <= b.total <= 1.0


@given(terms_strategy, st.sampled_from(sorted(WEIGHTS)), unit, unit)
def test_compose_is_monotone_in_each_term(
    terms: dict[str, float], name: str, a: float, b: float
) -> None:
    low, high = sorted((a, b))
    lo = compose({**terms, name: low}, WEIGHTS)
    hi = compose({**terms, name: high}, WEIGHTS)
    if WEIGHTS[name] and name in ("regression", "noop"):  # penalties: more is worse
        lo, hi = hi, lo
    assert lo.total <= hi.total + 1e-12
    assert lo.score <= hi.score + 1e-12


@pytest.mark.parametrize(
    ("weights", "fragment"),
    [
        ({"hidden": -1.0}, "weight of 'hidden'"),
        ({"hidden": math.nan}, "weight of 'hidden'"),
        ({"hidden": "1"}, "must be a number"),
    ],
)
def test_bad_weights_name_the_argument(weights: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match="^weights: ") as err:
        compose({"hidden": 1.0}, weights)
    assert fragment in str(err.value)


def test_missing_weight_and_misspelt_weight_are_errors() -> None:
    with pytest.raises(ValueError, match="no weight for term 'lint'"):
        compose({"hidden": 1.0, "lint": 1.0}, {"hidden": 1.0})
    with pytest.raises(ValueError, match="no term named 'hiden'"):
        compose({"hidden": 1.0}, {"hidden": 1.0, "hiden": 1.0})


def test_out_of_range_values_and_unknown_gate_are_errors() -> None:
    with pytest.raises(ValueError, match="terms: credit 'hidden'"):
        compose({"hidden": 1.5}, {"hidden": 1.0})
    with pytest.raises(ValueError, match="terms: credit 'hidden'"):
        compose({"hidden": math.nan}, {"hidden": 1.0})
    with pytest.raises(ValueError, match="terms: shaping"):
        compose({"hidden": 1.0, "shaping": -1.5}, {"hidden": 1.0, "shaping": 1.0})
    with pytest.raises(ValueError, match="^gates: unknown gate 'crashed'"):
        compose({"hidden": 1.0}, {"hidden": 1.0}, gates=["crashed"])
    with pytest.raises(ValueError, match="^score: "):
        compose({"hidden": 1.0}, {"hidden": 1.0}, score=1.2)


def test_merge_weights_for_env_kwargs() -> None:
    defaults = {"hidden": 3.0, "visible": 1.0}
    assert merge_weights(defaults, {"visible": 0.0}) == {"hidden": 3.0, "visible": 0.0}
    assert merge_weights(defaults, None) == defaults
    with pytest.raises(ValueError, match="^reward_weights: unknown term 'hiden'"):
        merge_weights(defaults, {"hiden": 1.0}, argument="reward_weights")
    with pytest.raises(ValueError, match="known terms"):
        validate_weights({"x": 1.0}, known={"y"})


def test_flat_dict_is_all_floats_with_every_gate() -> None:
    b = compose({"hidden": 0.5}, {"hidden": 1.0}, gates=["compile_error"])
    flat = b.to_flat_dict()
    assert all(isinstance(v, float) for v in flat.values())
    assert flat["reward/total"] == COMPILE_ERROR_TOTAL
    assert flat["reward/gate/compile_error"] == 1.0
    assert flat["reward/gate/hack_flagged"] == 0.0
    assert flat["reward/hidden"] == 0.5
    assert set(compose({"hidden": 1.0}, {"hidden": 1.0}).to_flat_dict("r")) >= {
        "r/total",
        "r/score",
    }


def test_render_is_compact_and_mentions_gates_terms_notes() -> None:
    b = compose(
        {"hidden": 0.8, "regression": 0.25},
        {"hidden": 1.0, "regression": 1.0},
        details={"hidden": "4/5"},
        notes=["broke test_a"],
    )
    text = b.render()
    assert text.splitlines()[0].startswith("reward 0.55 (score 0.55)")
    assert "hidden 0.80x1 (4/5)" in text
    assert "regression -0.25x1" in text
    assert "note: broke test_a" in text
    gated = compose({}, {}, gates=["compile_error"]).render()
    assert gated == "reward -0.30 (score 0.00) gates: compile_error"


def test_breakdown_round_trips_through_json() -> None:
    b = compose({"hidden": 0.8, "shaping": -0.1}, {"hidden": 1.0, "shaping": 1.0}, notes=["n"])
    again = RewardBreakdown.model_validate_json(b.model_dump_json())
    assert again == b


def test_prebuilt_terms_take_the_given_weight() -> None:
    term = RewardTerm(name="regression", value=0.5, weight=9.0, kind="penalty", detail="1/2")
    b = compose({"hidden": 1.0, "regression": term}, {"hidden": 1.0, "regression": 1.0})
    assert b.terms["regression"].weight == 1.0
    assert b.terms["regression"].detail == "1/2"
    assert b.total == pytest.approx(0.5)
