"""Calibration rewards for stated confidences.

:func:`brier_reward` is ``1 - (q - y)**2``: a strictly proper scoring rule. If the event
happens with probability ``p``, the expected reward ``1 - p(1-q)**2 - (1-p)q**2`` is
maximised exactly at ``q = p``, so the policy's best move is to report what it
believes. The seeds used ``1 - |q - y|``, whose expectation ``1 - p(1-q) - (1-p)q`` is
linear in ``q``: it is maximised at ``q = 1`` whenever ``p > 0.5`` (and ``q = 0`` below),
so it rewards overconfidence.
"""

from __future__ import annotations

import math

__all__ = ["brier_reward", "expected_brier_reward"]


def _check_probability(q: float, argument: str) -> float:
    if isinstance(q, bool) or not isinstance(q, int | float) or not (0.0 <= q <= 1.0):
        raise ValueError(f"{argument}: must be a probability in [0, 1], got {q!r}")
    return float(q)


def brier_reward(confidence: float, correct: bool) -> float:
    """``1 - (confidence - correct)**2``, in [0, 1].

    Args:
        confidence: stated probability in [0, 1] that the claim is correct.
        correct: whether it was.
    """
    q = _check_probability(confidence, "confidence")
    y = 1.0 if correct else 0.0
    return 1.0 - (q - y) ** 2


def expected_brier_reward(confidence: float, probability: float) -> float:
    """Expected :func:`brier_reward` of ``confidence`` when the truth has ``probability``."""
    p = _check_probability(probability, "probability")
    value = p * brier_reward(confidence, True) + (1.0 - p) * brier_reward(confidence, False)
    return value if math.isfinite(value) else 0.0
