"""Outcome terms: pass rates, potential-based shaping and regressions.

Potential-based shaping (Ng, Harada & Russell, 1999) adds
``F(s, s') = gamma * Phi(s') - Phi(s)`` to every step's reward. Along any trajectory
the shaping terms telescope: their discounted sum is
``gamma**T * Phi(s_T) - Phi(s_0)``, which depends only on the end points, and
``Phi(s_0)`` does not depend on the policy at all. So the shaped return of every
policy differs from its unshaped return by the same start-state constant (with
``gamma=1`` and a terminal potential of the final state's pass rate), every policy's
ranking is unchanged, and the optimal policy is unchanged. Any *other* per-step
bonus (say +0.1 for each newly passing test, or +0.05 per ``run_tests``) can be
farmed by oscillating and does change the optimum.

Here the state potential is ``Phi(p) = p**2`` of the visible pass rate ``p``: convex,
so the last tests fixed are worth more than the first ones. The environments
(:class:`~forgegym.envs.code_env.CodeEnv`) also give the start state and the terminal
state potential 0 (a valid choice: the start state is distinct, its step counter is 0),
so an episode's shaping sums to exactly 0 and its return equals the final
``RewardBreakdown.total`` (the README's reward contract).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["pass_rate", "potential", "regression", "shaping"]


def _check_rate(p: float, argument: str) -> float:
    if isinstance(p, bool) or not isinstance(p, int | float) or not (0.0 <= p <= 1.0):
        raise ValueError(f"{argument}: pass rate must be in [0, 1], got {p!r}")
    return float(p)


def pass_rate(verdicts: Mapping[str, bool]) -> float:
    """Fraction of test ids whose verdict is exactly ``True`` (0.0 when there are none).

    Only a boolean ``True`` counts: a skipped or errored test recorded as ``None`` or
    any other value reads as not passed.
    """
    if not verdicts:
        return 0.0
    return sum(1 for verdict in verdicts.values() if verdict is True) / len(verdicts)


def potential(p: float) -> float:
    """The shaping potential ``Phi(p) = p**2`` of a pass rate ``p`` in [0, 1]."""
    p = _check_rate(p, "p")
    return p * p


def shaping(prev_p: float, p: float, gamma: float = 1.0) -> float:
    """Potential-based shaping ``gamma * Phi(p) - Phi(prev_p)`` for one step.

    Args:
        prev_p: pass rate before the step.
        p: pass rate after the step.
        gamma: the trainer's discount in [0, 1]; use the same one or the optimal policy
            is no longer guaranteed to be preserved.

    Returns:
        A value in [-1, 1] (a ``"shaping"`` term for :func:`~forgegym.rewards.compose`).
    """
    if isinstance(gamma, bool) or not isinstance(gamma, int | float) or not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma: must be in [0, 1], got {gamma!r}")
    return gamma * potential(p) - potential(_check_rate(prev_p, "prev_p"))


def regression(before: Mapping[str, bool], after: Mapping[str, bool]) -> float:
    """Fraction of tests passing ``before`` that do not pass ``after``.

    A test that passed before and is missing afterwards (no longer collected, deleted)
    counts as broken. Returns 0.0 when nothing passed before. Use it as a
    ``"regression"`` penalty term.
    """
    passing = [test for test, verdict in before.items() if verdict is True]
    if not passing:
        return 0.0
    broken = sum(1 for test in passing if after.get(test) is not True)
    return broken / len(passing)
