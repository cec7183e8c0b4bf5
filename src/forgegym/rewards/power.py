"""Test power as a fraction: how much of what the original test caught a changed test
still catches.

A test repair must keep the test's power to catch the bug it guards against. Judged
with one mutant, power is all or nothing, and which single mutant a task happens to
hold decides whether a legitimate repair (an explicit argument instead of a default,
a narrower fixture) keeps "all" of it. Judged with several mutants, chosen to match
what the original assertions checked (an order assertion gets order-breaking mutants,
an equality value mutants), power is the fraction still caught, and a repair succeeds
when it keeps at least :data:`POWER_THRESHOLD` of it.

Calibration of the threshold: a repair that loses one mutant in four or five (0.75,
0.8: an explicit argument makes one default-value mutant unobservable) must still
succeed; a test that drops a whole assertion kind (the order check of a 2 order + 3
value set: 0.6) must not. 0.75 separates the two. Families: FlakyRepair's generated
bank (one mutant per scenario: the fraction is 0 or 1) and repository mode (every
mutant the pristine test caught).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["POWER_THRESHOLD", "PowerScore", "power_score"]

#: The least fraction of the required mutants a repaired test must still catch.
POWER_THRESHOLD = 0.75


@dataclass(frozen=True)
class PowerScore:
    """``caught`` of ``required`` mutants; ``fraction`` (1.0 when nothing is required:
    nothing was lost) and whether it reaches the threshold (``ok``)."""

    caught: int
    required: int
    fraction: float
    ok: bool

    def describe(self) -> str:
        return f"{self.caught}/{self.required} mutants caught ({self.fraction:.0%})"


def power_score(caught: Sequence[bool], threshold: float = POWER_THRESHOLD) -> PowerScore:
    """The power of a test from ``caught`` (one flag per required mutant: whether the
    test failed on it). ``threshold`` in (0, 1]."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    required = len(caught)
    hits = sum(bool(c) for c in caught)
    fraction = 1.0 if required == 0 else hits / required
    return PowerScore(hits, required, fraction, fraction >= threshold - 1e-12)
