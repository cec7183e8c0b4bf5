"""The scheduler's per-task record and the logit helpers of its level prior."""

from __future__ import annotations

import math
from typing import Any

from forgegym.curricula.config import TIERS, Tier

__all__ = ["TaskStats", "logit", "sigmoid"]


class TaskStats:
    """Mutable per-task record (kept out of pydantic for speed in the hot loop)."""

    __slots__ = (
        "alpha",
        "beta",
        "difficulty",
        "successes",
        "trials",
        "last_seen",
        "added",
        "tier",
        "fast",
        "slow",
        "history",
    )

    def __init__(self, alpha: float, beta: float, difficulty: int | None, added: int) -> None:
        self.alpha = alpha
        self.beta = beta
        self.difficulty = difficulty
        self.successes = 0.0
        self.trials = 0
        self.last_seen = -1
        self.added = added
        self.tier: Tier = "learnable"
        self.fast = 0.0  # EMAs of the group success rate (learning progress)
        self.slow = 0.0
        self.history: list[list[float]] = []

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "difficulty": self.difficulty,
            "successes": self.successes,
            "trials": self.trials,
            "last_seen": self.last_seen,
            "added": self.added,
            "tier": self.tier,
            "fast": self.fast,
            "slow": self.slow,
            "history": self.history,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskStats:
        stats = cls(
            float(data["alpha"]), float(data["beta"]), data.get("difficulty"), int(data["added"])
        )
        stats.successes = float(data["successes"])
        stats.trials = int(data["trials"])
        stats.last_seen = int(data["last_seen"])
        tier = data.get("tier", "learnable")
        if tier not in TIERS:
            raise ValueError(f"state: unknown tier {tier!r}")
        stats.tier = tier
        stats.fast = float(data.get("fast", 0.0))
        stats.slow = float(data.get("slow", 0.0))
        stats.history = [list(map(float, h)) for h in data.get("history", [])]
        return stats


def logit(p: float) -> float:
    p = min(max(p, 0.02), 0.98)
    return math.log(p / (1.0 - p))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
