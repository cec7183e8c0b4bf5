"""One TRL reward call's outcome: the graded ``(reward, breakdown)`` pairs turned into
what TRL gets (``None`` for a machine failure or a canary), the curriculum's records,
and what the batch logs (:func:`~forgegym.integrations.trl.make_reward_funcs`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from forgegym.curricula import CurriculumScheduler
from forgegym.play.telemetry import batch_telemetry, known_hack_keys
from forgegym.tasklib.canaries import is_canary_id

__all__ = ["score_batch"]


def _success_of(env: Any, breakdown: Any) -> bool:
    return bool(env.solved(breakdown))


@dataclass
class _ScoredBatch:
    """One reward call's outcome, per completion: the reward TRL gets (``None``: the
    machine failed, or a canary, never paid), the reward grading gave, the breakdown,
    success, whether it is a canary; and the term dicts of the paid ones."""

    rewards: list[float | None]
    graded_reward: list[float | None]
    breakdowns: list[Any]
    successes: list[bool]
    canary: list[bool]
    flat: list[dict[str, float]]

    def log(
        self,
        log_metric: Callable[[str, float], None],
        seen_keys: set[str],
        curriculum: CurriculumScheduler | None,
        log_terms: bool,
    ) -> None:
        """Log the batch's telemetry and canary shares; with ``log_terms``, the mean of
        every term, the success rate and the curriculum's tier sizes."""
        # Every key logged once stays logged (0.0 when absent), with every registered
        # scanner's hack key from the first batch: a plot tells zero from missing.
        known = sorted({*known_hack_keys(), *seen_keys})
        telemetry = batch_telemetry(self.breakdowns, self.canary, self.successes, known=known)
        seen_keys.update(k for k in telemetry if k != "forgegym/cheat_rate")
        for key, value in telemetry.items():
            log_metric(key, value)
        if any(self.canary):
            log_metric("forgegym/canary_share", sum(self.canary) / len(self.canary))
            unpaid = [
                r
                for r, c in zip(self.graded_reward, self.canary, strict=True)
                if c and r is not None
            ]
            if unpaid:
                log_metric("forgegym/canary_reward", float(np.mean(unpaid)))
        if not log_terms:
            return
        keys = sorted({key for entry in self.flat for key in entry})
        for key in keys:
            log_metric(key, float(np.mean([entry.get(key, 0.0) for entry in self.flat])))
        honest = [ok for ok, c in zip(self.successes, self.canary, strict=True) if not c]
        if honest:
            log_metric("reward/success", float(np.mean(honest)))
        if curriculum is not None:
            for tier, size in curriculum.tier_sizes().items():
                log_metric(f"curriculum/{tier}", float(size))


def score_batch(
    env: Any,
    task_id: list[str],
    graded: list[tuple[float, Any]],
    curriculum: CurriculumScheduler | None,
) -> _ScoredBatch:
    """Turn one batch's ``(reward, breakdown)`` pairs into what TRL gets, and report
    each task's outcomes to ``curriculum`` (one ``record`` per task, canaries left out)."""
    n = len(task_id)
    batch = _ScoredBatch([0.0] * n, [None] * n, [None] * n, [False] * n, [], [])
    batch.canary = [is_canary_id(tid) for tid in task_id]
    groups: dict[str, list[int]] = {}
    for index, tid in enumerate(task_id):
        groups.setdefault(tid, []).append(index)
    for tid, indices in groups.items():
        wins = 0
        for index in indices:
            value, breakdown = graded[index]
            batch.breakdowns[index] = breakdown
            if not getattr(breakdown, "valid", True):
                # The machine failed (after one retry): no reward at all. TRL skips None
                # (the completion gets no advantage), where a 0 would teach the policy
                # from noise.
                batch.rewards[index] = None
                continue
            batch.graded_reward[index] = float(value)
            ok = _success_of(env, breakdown)
            batch.successes[index] = ok
            wins += ok
            if batch.canary[index]:
                # Masked: the cheat a canary measures is never paid (nor any answer: the
                # advantage of a canary completion is 0).
                batch.rewards[index] = None
            else:
                batch.rewards[index] = float(value)
                batch.flat.append(breakdown.to_flat_dict())
        if curriculum is not None and not is_canary_id(tid):
            curriculum.record(tid, wins, len(indices))
    return batch
