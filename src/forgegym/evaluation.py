"""Run policies on environments and record results (what ``forgegym eval`` does).

Results use the schema of :mod:`forgegym.results`, which ``forgegym plot episode`` reads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import gymnasium as gym

from forgegym.policies import Policy
from forgegym.policies import make as make_policy
from forgegym.results import EvalEpisode, EvalResults, EvalStep

__all__ = ["RunSummary", "evaluate", "run_episode", "summarise"]

#: ``info`` keys copied into each step record (JSON scalars only).
_INFO_KEYS = ("step", "task_id", "family", "difficulty", "score", "success", "action_error")


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
) -> EvalEpisode:
    """Play one episode. With ``log``, print the seeds' ``[START]``/``[STEP]``/``[END]`` lines."""
    observation, info = env.reset(seed=seed, options=options)
    task_id, family, difficulty = info["task_id"], info["family"], info["difficulty"]
    if log is not None:
        print(f"[START] task={task_id} env={env_id} model={policy_name}", file=log, flush=True)
    steps: list[EvalStep] = []
    done = False
    while not done:
        action = policy(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        error = info.get("action_error")
        steps.append(
            EvalStep(
                reward=float(reward),
                action=action,
                terminated=terminated,
                truncated=truncated,
                reward_breakdown=info.get("reward_breakdown"),
                info={k: info[k] for k in _INFO_KEYS if k in info},
            )
        )
        if log is not None:
            print(
                f"[STEP] step={info['step']} action={_one_line(action)} reward={reward:.2f} "
                f"done={str(done).lower()} error={_one_line(error) if error else 'null'}",
                file=log,
                flush=True,
            )
    episode = EvalEpisode(
        env_id=env_id,
        policy=policy_name,
        task_id=task_id,
        family=family,
        difficulty=difficulty,
        seed=seed,
        steps=steps,
        score=float(info.get("score", 0.0)),
        success=bool(info.get("success", False)),
    )
    if log is not None:
        print(
            f"[END] success={str(episode.success).lower()} steps={len(steps)} "
            f"score={episode.score:.3f} rewards={','.join(f'{s.reward:.2f}' for s in steps)}",
            file=log,
            flush=True,
        )
    return episode


def evaluate(
    env_id: str,
    policy_name: str,
    *,
    episodes: int = 10,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    log_steps: bool | None = None,
    on_episode: Callable[[EvalEpisode], None] | None = None,
) -> EvalResults:
    """Evaluate ``policy_name`` on ``episodes`` episodes of ``env_id`` (seeds ``seed+i``)."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    env = gym.make(env_id, **(env_kwargs or {}))
    try:
        policy = make_policy(policy_name, env, seed=seed)
        log = sys.stdout if (log_steps if log_steps is not None else policy_name == "llm") else None
        results = EvalResults(
            metadata={"env_id": env_id, "policy": policy_name, "seed": seed, "episodes": episodes}
        )
        for index in range(episodes):
            episode = run_episode(
                env, policy, env_id=env_id, policy_name=policy_name, seed=seed + index, log=log
            )
            results.episodes.append(episode)
            if on_episode is not None:
                on_episode(episode)
        from forgegym.family import family_for_env

        report = family_for_env(env_id).eval_report(results)
        if report is not None:
            results.metadata["report"] = report
        return results
    finally:
        env.close()


@dataclass(frozen=True)
class RunSummary:
    """Aggregate of one (env, policy) pair."""

    env_id: str
    policy: str
    episodes: int
    success_rate: float
    mean_score: float
    mean_reward: float


def summarise(results: EvalResults) -> list[RunSummary]:
    """One :class:`RunSummary` per (env, policy) pair, in first-seen order."""
    groups: dict[tuple[str, str], list[EvalEpisode]] = {}
    for episode in results.episodes:
        groups.setdefault((episode.env_id, episode.policy), []).append(episode)
    return [
        RunSummary(
            env_id=env_id,
            policy=policy,
            episodes=len(eps),
            success_rate=sum(e.success for e in eps) / len(eps),
            mean_score=sum(e.score for e in eps) / len(eps),
            mean_reward=sum(e.total_reward for e in eps) / len(eps),
        )
        for (env_id, policy), eps in groups.items()
    ]
