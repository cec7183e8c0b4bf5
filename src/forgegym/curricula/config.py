"""The curriculum's settings (:class:`CurriculumConfig`), its tiers and the state file's
format: what :class:`~forgegym.curricula.scheduler.CurriculumScheduler` validates and what
a saved state names."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["STATE_FORMAT", "TIERS", "CurriculumConfig", "Tier", "config_from_state"]

Tier = Literal["too_easy", "learnable", "too_hard"]
TIERS: tuple[Tier, ...] = ("too_easy", "learnable", "too_hard")
STATE_FORMAT = "forgegym.curriculum/1"
_LEGACY_CONFIG_KEYS: frozenset[str] = frozenset()  # accepted in old state files, ignored


class CurriculumConfig(BaseModel):
    """Validated, immutable settings of a :class:`CurriculumScheduler`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int = Field(
        default=3,
        ge=1,
        description="The k of pass@k used for tiers. With the default thresholds, k = 3 "
        "keeps tasks whose success probability is roughly in [0.07, 0.5]: a training "
        "policy only makes a task easier, so one that already passes more than half of "
        "its rollouts soon gives no signal, while a hard one is next.",
    )
    too_easy: float = Field(default=0.85, gt=0.0, le=1.0, description="pass@k at/above: too easy.")
    too_hard: float = Field(default=0.20, ge=0.0, lt=1.0, description="pass@k below: too hard.")
    prior_alpha: float = Field(default=1.0, gt=0.0)
    prior_beta: float = Field(default=1.0, gt=0.0)
    min_trials: float = Field(
        default=4.0, ge=0.0, description="Recorded rollouts needed before a tier is final."
    )
    retire_after: int = Field(
        default=8,
        ge=1,
        description="Retire a task never (or always) solved in all of its rollouts once it "
        "has at least this many.",
    )
    evidence_window: float = Field(
        default=128.0,
        gt=0.0,
        description="A task's posterior keeps at most this many rollouts of evidence: older "
        "outcomes are scaled down as new ones arrive, so estimates follow a learning policy.",
    )
    learnability: Literal["variance", "passk_slope"] = "variance"
    temperature: float = Field(
        default=0.33, gt=0.0, description="Weights are learnability ** (1 / temperature)."
    )
    level_prior_strength: float = Field(
        default=2.0,
        gt=0.0,
        description="Prior weight, in pseudo-rollouts, of the level prior in a task's "
        "posterior; the data's estimate (from the spread of first-group outcomes) replaces "
        "it as groups of two or more rollouts come in.",
    )
    level_horizon: float = Field(
        default=128.0,
        gt=0.0,
        description="Rollouts over which level means forget (1/e): a learning policy "
        "makes every level easier, so what new tasks gave long ago misleads the frontier.",
    )
    level_gap: float = Field(
        default=1.0,
        gt=0.0,
        description="Prior logit gap between adjacent levels (replaced by data as it comes).",
    )
    fresh_shrinkage: float = Field(
        default=4.0,
        ge=0.0,
        description="Weight, in groups, of the level prior's prediction of a new task's "
        "learnability against the signal that new tasks at that level actually gave.",
    )
    progress_weight: float = Field(
        default=1.0, ge=0.0, description="Weight of the learning-progress bonus."
    )
    staleness_weight: float = Field(default=0.5, ge=0.0)
    staleness_horizon: float = Field(default=256.0, gt=0.0, description="In rollouts.")
    retired_fraction: float = Field(
        default=0.01,
        ge=0.0,
        le=1.0,
        description="Share of draws that re-check retired tasks (most retired tasks are "
        "broken or long solved: re-checks are a safety net, not a source of signal).",
    )
    promising_ratio: float = Field(
        default=1.0,
        ge=0.0,
        description="A tried task is drawn only while its learnability is at least this "
        "multiple of a new task's from the frontier: below that, a new task is the better bet.",
    )
    min_learnable: int = Field(
        default=1, ge=1, description="Draw a new task while fewer tried tasks are promising."
    )
    replenish_batch: int = Field(default=16, ge=1)
    reestimate_every: int = Field(default=512, ge=1, description="Rollouts between re-estimations.")
    decay: float = Field(
        default=0.9, gt=0.0, le=1.0, description="Evidence kept per re-estimation."
    )
    adaptive_difficulty: bool = True
    difficulty: int | None = Field(default=None, description="Fix replenishment to one level.")
    max_history: int = Field(default=100_000, ge=0, description="Rollout records kept for plots.")
    seed: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> CurriculumConfig:
        if self.too_hard >= self.too_easy:
            raise ValueError(f"too_hard ({self.too_hard}) must be below too_easy ({self.too_easy})")
        return self


def config_from_state(state: dict[str, Any]) -> CurriculumConfig:
    """The config a state file names (keys of older versions ignored)."""
    raw = state.get("config")
    if not isinstance(raw, dict):
        raise ValueError("state: missing config")
    return CurriculumConfig(**{k: v for k, v in raw.items() if k not in _LEGACY_CONFIG_KEYS})
