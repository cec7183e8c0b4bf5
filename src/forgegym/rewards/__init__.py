"""The shared reward module every family composes.

* :mod:`~forgegym.rewards.breakdown`: named terms, gates and :func:`compose`.
* :mod:`~forgegym.rewards.outcome`: pass rates, potential-based shaping, regressions.
* :mod:`~forgegym.rewards.calibration`: the Brier rule for stated confidences.
* :mod:`~forgegym.rewards.text`: ROUGE-L via ``rouge-score``.
"""

from forgegym.rewards.breakdown import (
    COMPILE_ERROR_TOTAL,
    DEFAULT_TERM_KINDS,
    GATE_TOTALS,
    HACK_TOTAL,
    PARSE_ERROR_TOTAL,
    PATCH_FAILED_TOTAL,
    UNGATED_FLOOR,
    RewardBreakdown,
    RewardTerm,
    TermKind,
    compose,
    merge_weights,
    validate_weights,
)
from forgegym.rewards.calibration import brier_reward, expected_brier_reward
from forgegym.rewards.outcome import pass_rate, potential, regression, shaping
from forgegym.rewards.text import rouge_l

__all__ = [
    "COMPILE_ERROR_TOTAL",
    "DEFAULT_TERM_KINDS",
    "GATE_TOTALS",
    "HACK_TOTAL",
    "PARSE_ERROR_TOTAL",
    "PATCH_FAILED_TOTAL",
    "UNGATED_FLOOR",
    "RewardBreakdown",
    "RewardTerm",
    "TermKind",
    "brier_reward",
    "compose",
    "expected_brier_reward",
    "merge_weights",
    "pass_rate",
    "potential",
    "regression",
    "rouge_l",
    "shaping",
    "validate_weights",
]
