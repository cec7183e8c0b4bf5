"""The evaluation results schema: what ``forgegym eval`` writes and the plots read.

::

    {"format": "forgegym.eval/1", "metadata": {...},
     "episodes": [{"env_id": str, "policy": str, "task_id": str,
                   "family": str | null, "difficulty": int | null, "seed": int | null,
                   "score": float, "success": bool,
                   "steps": [{"reward": float, "action": str | null,
                              "terminated": bool, "truncated": bool,
                              "reward_breakdown": {...} | null,   # info["reward_breakdown"]
                              "info": {JSON-scalar subset of info}}, ...]}, ...]}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["EVAL_FORMAT", "EvalEpisode", "EvalResults", "EvalStep"]

EVAL_FORMAT = "forgegym.eval/1"


class EvalStep(BaseModel):
    """One step of an evaluated episode."""

    reward: float
    action: str | None = Field(default=None, description="The action text the policy sent.")
    terminated: bool = False
    truncated: bool = False
    reward_breakdown: dict[str, Any] | None = Field(
        default=None, description="info['reward_breakdown'] as the env reported it (final steps)."
    )
    info: dict[str, Any] = Field(
        default_factory=dict,
        description="JSON-scalar subset of info: step, task_id, family, difficulty, score, "
        "success, action_error, ...",
    )


class EvalEpisode(BaseModel):
    """One evaluated episode."""

    env_id: str
    policy: str
    task_id: str
    family: str | None = None
    difficulty: int | None = None
    seed: int | None = None
    steps: list[EvalStep] = Field(default_factory=list)
    score: float
    success: bool

    @property
    def total_reward(self) -> float:
        return float(sum(step.reward for step in self.steps))

    @property
    def group(self) -> str:
        """The family, else the env id: what :func:`plot_scores` groups by."""
        return self.family or self.env_id or "unknown"


class EvalResults(BaseModel):
    """What ``forgegym eval`` writes and :func:`plot_episode` / :func:`plot_scores` read."""

    format: str = EVAL_FORMAT
    metadata: dict[str, Any] = Field(default_factory=dict)
    episodes: list[EvalEpisode] = Field(default_factory=list)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> EvalResults:
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))
