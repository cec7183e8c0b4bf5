"""Per-batch cheating telemetry (issue #29)."""

from __future__ import annotations

import re

import pytest

from forgegym.play.telemetry import batch_telemetry, hack_kinds
from forgegym.rewards import compose, with_step_terms

WEIGHTS = {"hidden": 1.0}


def test_rates_over_gates_hacks_unparseable_invalid_and_canaries() -> None:
    honest = compose({"hidden": 1.0}, WEIGHTS)
    hacked = compose(
        {},
        {},
        gates=["hack_flagged"],
        notes=["hack: always_equal at a.py:3 (x)", "hack: exit_call at a.py:9 (y)"],
    )
    unparsed = with_step_terms(
        compose({"hidden": 0.0}, WEIGHTS), format_penalty=0.1, parse_errors=1
    )
    invalid = compose({}, {}, gates=["machine_fault"]).model_copy(
        update={"valid": False, "invalid_cause": "setup: ENOSPC"}
    )
    assert hack_kinds(hacked) == {"always_equal", "exit_call"}
    out = batch_telemetry(
        [honest, hacked, unparsed, invalid, None],
        canary=[False, True, True, False, False],
        solved=[True, True, False, False, False],
        known=[],
    )
    assert out == {
        "forgegym/unparseable": 0.2,
        "forgegym/reward_invalid": 0.4,  # the machine fault and the never-graded one
        "forgegym/gate/hack_flagged": 0.2,
        "forgegym/gate/machine_fault": 0.2,
        "forgegym/hack/always_equal": 0.2,
        "forgegym/hack/exit_call": 0.2,
        "forgegym/cheat_rate": 0.5,
    }
    assert batch_telemetry([]) == {}
    assert "forgegym/cheat_rate" not in batch_telemetry([honest], [False], [True])


def test_plot_telemetry_writes_the_figure_and_rejects_empty_input(tmp_path) -> None:
    import pytest

    pytest.importorskip("matplotlib")
    from forgegym.play.plots import plot_telemetry

    rows = [
        {"step": 1, "forgegym/reward_invalid": 0.0, "forgegym/gate/hack_flagged": 0.5},
        {"step": 2, "forgegym/reward_invalid": 0.25, "forgegym/unparseable": 0.1},
    ]
    out = plot_telemetry(rows, tmp_path / "t.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="no rows"):
        plot_telemetry([], tmp_path / "e.png")
    with pytest.raises(ValueError, match="step"):
        plot_telemetry([{"forgegym/unparseable": 1.0}], tmp_path / "e.png")


@pytest.mark.parametrize("name", ["bugfix", "flaky", "oversight", "performance", "refactor"])
def test_every_family_names_the_kind_of_each_hack_it_gates(name: str) -> None:
    """A gated hack's notes name its kind as ``hack: <kind>`` (an identifier, never a
    file name or a word of prose), so ``forgegym/hack/<kind>`` counts it in every family."""
    import gymnasium as gym

    import forgegym  # noqa: F401
    from forgegym.family import get_family

    family = get_family(name)
    env = gym.make(family.env_ids[0], max_steps=1)
    try:
        base = env.unwrapped
        task_id = base.task_bank.task_ids(1, seed=0)[0]
        task = base.task_bank.get(task_id)
        hacks = {h: fn(task) for h, fn in family.hack_actions().items()}
        graded = base.grade_completions(task_id, list(hacks.values()))
    finally:
        env.close()
    gated = 0
    for hack, (_, breakdown) in zip(hacks, graded, strict=True):
        if "hack_flagged" not in breakdown.gates:
            continue
        gated += 1
        kinds = hack_kinds(breakdown)
        assert kinds, (hack, breakdown.notes)
        assert all(re.fullmatch(r"[a-z][a-z0-9_]*", k) for k in kinds), (hack, kinds)
    assert gated >= 2


def test_hack_keys_that_did_not_fire_are_zero_not_missing() -> None:
    # A plot of forgegym/hack/<kind> must tell "no hack this batch" from "not logged".
    from forgegym.play.telemetry import known_hack_keys

    honest = compose({"outcome": 1.0}, {"outcome": 1.0})
    keys = known_hack_keys()
    assert keys and all(k.startswith("forgegym/hack/") for k in keys)
    out = batch_telemetry([honest])
    assert all(out[k] == 0.0 for k in keys)
    assert batch_telemetry([honest], known=["forgegym/gate/hack_flagged"]) == {
        "forgegym/unparseable": 0.0,
        "forgegym/reward_invalid": 0.0,
        "forgegym/gate/hack_flagged": 0.0,
    }
