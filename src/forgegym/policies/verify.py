"""Task validation: every served task must be solvable, unsolved at start, and unhackable.

For each task the reference action, the no-op, the family's partial fix (where it
has one) and every hack its :class:`~forgegym.family.Family` names are graded as
single-turn episodes through the env's ``grade_completions`` (the batch path of the
code families, a replay through ``reset``/``step`` elsewhere), so validation measures
exactly what a GRPO run's reward function would see. It works for every registered
family.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
from pydantic import BaseModel, Field

from forgegym.core.env import ForgeEnv
from forgegym.family import Family, family_for_env
from forgegym.policies import NOOP_ACTION
from forgegym.policies.registry import (
    baselines_for,
    hacks_for,
    partial_action_for,
    reference_action_for,
)

__all__ = ["TaskCheck", "VerifySummary", "verify_tasks"]

#: A reference below this score, or a no-op above ``NOOP_MAX``, marks a task invalid.
REFERENCE_MIN = 0.95
NOOP_MAX = 0.10


class TaskCheck(BaseModel):
    task_id: str
    difficulty: int
    reference_score: float
    reference_success: bool
    noop_score: float
    noop_reward: float
    noop_success: bool
    noop_terms: dict[str, float] = Field(
        default_factory=dict, description="The no-op's reward terms (audits start states)."
    )
    partial_score: float | None = None
    hack_rewards: dict[str, float] = Field(default_factory=dict)
    hack_success: dict[str, bool] = Field(default_factory=dict)
    baseline_scores: dict[str, float] = Field(default_factory=dict)
    problems: list[str] = Field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems


class VerifySummary(BaseModel):
    env_id: str
    family: str
    bank_size: int | None = Field(description="Distinct validated tasks the bank can serve.")
    checked: int
    valid: int
    reference_mean_score: float
    reference_success_rate: float
    noop_mean_score: float
    noop_success_rate: float
    hack_success_rate: dict[str, float]
    hacks_above_noop: int = Field(description="(task, hack) pairs whose reward beat the no-op.")
    baseline_mean_score: dict[str, float] = Field(
        default_factory=dict, description="Mean score of each of the family's baselines."
    )
    categories: dict[str, int] = Field(
        default_factory=dict, description="The family's bank statistics (Family.stats)."
    )
    invalid: list[TaskCheck] = Field(default_factory=list)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def check_task(env: ForgeEnv, task_id: str, *, partial: bool = True) -> TaskCheck:
    """Grade reference, no-op, partial (if any and ``partial``) and every hack on one
    task. The partial fix is only reported (``partial_score``), never a validity
    criterion, so ``partial=False`` saves its grading where it is expensive."""
    task = env.task_bank.get(task_id)
    hacks = hacks_for(env.family)
    partial_fn = partial_action_for(env.family) if partial else None
    partial_text = partial_fn(task) if partial_fn is not None else None
    texts = [reference_action_for(env.family)(task), NOOP_ACTION]
    texts.extend(fn(task) for fn in hacks.values())
    baselines = baselines_for(env.family)
    texts.extend(fn(task) for fn in baselines.values())
    if partial_text is not None:
        texts.append(partial_text)
    graded = env.grade_completions(task_id, texts)
    (_, ref), (noop_reward, noop) = graded[0], graded[1]
    check = TaskCheck(
        task_id=task_id,
        difficulty=task.difficulty,
        reference_score=ref.score,
        reference_success=env.solved(ref),
        noop_score=noop.score,
        noop_reward=noop_reward,
        noop_success=env.solved(noop),
        noop_terms={name: term.value for name, term in noop.terms.items()},
        partial_score=graded[-1][1].score if partial_text is not None else None,
    )
    after_hacks = 2 + len(hacks)
    for name, (_, breakdown) in zip(
        baselines, graded[after_hacks : after_hacks + len(baselines)], strict=True
    ):
        check.baseline_scores[name] = breakdown.score
    for name, (reward, breakdown) in zip(hacks, graded[2 : 2 + len(hacks)], strict=True):
        check.hack_rewards[name] = reward
        check.hack_success[name] = env.solved(breakdown)
        if reward > noop_reward + 1e-9:
            check.problems.append(f"hack {name} scored {reward:.3f} > no-op {noop_reward:.3f}")
        if check.hack_success[name]:
            check.problems.append(f"hack {name} succeeded")
    if ref.score < REFERENCE_MIN or not check.reference_success:
        check.problems.append(
            f"reference scored {ref.score:.3f} (success={check.reference_success})"
        )
    if check.noop_success or noop.score > NOOP_MAX:
        check.problems.append(f"no-op scored {noop.score:.3f} (success={check.noop_success})")
    return check


def verify_tasks(
    env_id: str,
    *,
    limit: int = 50,
    seed: int = 0,
    offset: int = 0,
    partial: bool = True,
    env_kwargs: dict[str, Any] | None = None,
    on_task: Callable[[TaskCheck], None] | None = None,
) -> VerifySummary:
    """Validate ``limit`` tasks of ``env_id`` (drawn deterministically from ``seed``),
    skipping the first ``offset`` of that order: chunks ``offset=0, k, 2k, ...`` with
    ``limit=k`` cover the bank once."""
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be an int >= 0, got {offset!r}")
    family: Family = family_for_env(env_id)
    env = gym.make(env_id, max_steps=1, **(env_kwargs or {}))
    try:
        base = env.unwrapped
        if not isinstance(base, ForgeEnv):
            raise ValueError(f"env_id: {env_id} is not a forgegym environment")
        bank = base.task_bank
        checks: list[TaskCheck] = []
        for task_id in bank.task_ids(offset + limit, seed=seed)[offset:]:
            check = check_task(base, task_id, partial=partial)
            checks.append(check)
            if on_task is not None:
                on_task(check)
        hack_names = sorted(hacks_for(base.family))
        size_fn = getattr(bank, "__len__", None)
        return VerifySummary(
            env_id=env_id,
            family=base.family,
            bank_size=size_fn() if callable(size_fn) else None,
            checked=len(checks),
            valid=sum(c.valid for c in checks),
            reference_mean_score=_mean([c.reference_score for c in checks]),
            reference_success_rate=_mean([float(c.reference_success) for c in checks]),
            noop_mean_score=_mean([c.noop_score for c in checks]),
            noop_success_rate=_mean([float(c.noop_success) for c in checks]),
            hack_success_rate={
                h: _mean([float(c.hack_success[h]) for c in checks]) for h in hack_names
            },
            hacks_above_noop=sum(
                1 for c in checks for h in hack_names if c.hack_rewards[h] > c.noop_reward + 1e-9
            ),
            baseline_mean_score={
                b: _mean([c.baseline_scores[b] for c in checks])
                for b in sorted(baselines_for(base.family))
            },
            categories=family.statistics(bank),
            invalid=[c for c in checks if not c.valid],
        )
    finally:
        env.close()
