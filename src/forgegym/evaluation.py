"""Run policies on environments and record results (what ``forgegym eval`` does).

The results file is :class:`EvalResults` as JSON; ``forgegym plot episode`` reads it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
from pydantic import BaseModel, Field

from forgegym.policies import Policy
from forgegym.policies import make as make_policy

__all__ = ["EpisodeResult", "EvalReport", "EvalResults", "StepRecord", "evaluate", "run_episode"]


class StepRecord(BaseModel):
    step: int
    action: str
    reward: float
    terminated: bool
    truncated: bool
    action_error: str | None = None
    reward_breakdown: dict[str, Any] | None = None


class EpisodeResult(BaseModel):
    env_id: str
    policy: str
    seed: int
    task_id: str
    family: str
    difficulty: int
    steps: list[StepRecord] = Field(default_factory=list)
    total_reward: float = 0.0
    score: float = 0.0
    success: bool = False
    reward_breakdown: dict[str, Any] | None = None


class EvalResults(BaseModel):
    env_id: str
    policy: str
    episodes: list[EpisodeResult] = Field(default_factory=list)

    @property
    def success_rate(self) -> float:
        return sum(e.success for e in self.episodes) / len(self.episodes) if self.episodes else 0.0

    @property
    def mean_score(self) -> float:
        return sum(e.score for e in self.episodes) / len(self.episodes) if self.episodes else 0.0

    @property
    def mean_reward(self) -> float:
        n = len(self.episodes)
        return sum(e.total_reward for e in self.episodes) / n if n else 0.0

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> EvalResults:
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))


class EvalReport(BaseModel):
    """What ``forgegym eval`` writes: one :class:`EvalResults` per (env, policy) pair."""

    runs: list[EvalResults] = Field(default_factory=list)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> EvalReport:
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def run_episode(
    env: gym.Env[Any, Any],
    policy: Policy,
    *,
    env_id: str,
    policy_name: str,
    seed: int,
    options: dict[str, Any] | None = None,
    log: TextIO | None = None,
) -> EpisodeResult:
    """Play one episode. With ``log``, print the seeds' ``[START]``/``[STEP]``/``[END]`` lines."""
    observation, info = env.reset(seed=seed, options=options)
    result = EpisodeResult(
        env_id=env_id,
        policy=policy_name,
        seed=seed,
        task_id=info["task_id"],
        family=info["family"],
        difficulty=info["difficulty"],
    )
    if log is not None:
        print(
            f"[START] task={result.task_id} env={env_id} model={policy_name}", file=log, flush=True
        )
    rewards: list[float] = []
    done = False
    while not done:
        action = policy(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        rewards.append(float(reward))
        error = info.get("action_error")
        result.steps.append(
            StepRecord(
                step=info["step"],
                action=action,
                reward=float(reward),
                terminated=terminated,
                truncated=truncated,
                action_error=error,
                reward_breakdown=info.get("reward_breakdown"),
            )
        )
        if log is not None:
            print(
                f"[STEP] step={info['step']} action={_one_line(action)} reward={reward:.2f} "
                f"done={str(done).lower()} error={_one_line(error) if error else 'null'}",
                file=log,
                flush=True,
            )
    result.total_reward = sum(rewards)
    result.score = float(info.get("score", 0.0))
    result.success = bool(info.get("success", False))
    result.reward_breakdown = info.get("reward_breakdown")
    if log is not None:
        print(
            f"[END] success={str(result.success).lower()} steps={len(rewards)} "
            f"score={result.score:.3f} rewards={','.join(f'{r:.2f}' for r in rewards)}",
            file=log,
            flush=True,
        )
    return result


def evaluate(
    env_id: str,
    policy_name: str,
    *,
    episodes: int = 10,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    log_steps: bool | None = None,
    on_episode: Callable[[EpisodeResult], None] | None = None,
) -> EvalResults:
    """Evaluate ``policy_name`` on ``episodes`` episodes of ``env_id`` (seeds ``seed+i``)."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    env = gym.make(env_id, **(env_kwargs or {}))
    try:
        policy = make_policy(policy_name, env, seed=seed)
        log = sys.stdout if (log_steps if log_steps is not None else policy_name == "llm") else None
        results = EvalResults(env_id=env_id, policy=policy_name)
        for index in range(episodes):
            episode = run_episode(
                env, policy, env_id=env_id, policy_name=policy_name, seed=seed + index, log=log
            )
            results.episodes.append(episode)
            if on_episode is not None:
                on_episode(episode)
        return results
    finally:
        env.close()
