"""Run policies on environments and record results (what ``forgegym eval`` does).

An evaluation is :func:`forgegym.play.rollouts.collect_rollouts` (the one rollout loop) on a
single env: episode ``i`` is reset with seed ``seed + i``, so it plays the task the
env's ``reset(seed=seed + i)`` picks through its task bank, and a vector-env rollout
with the same seed plays the same tasks (see :mod:`forgegym.play.rollouts`). Results use
the episode schema of :mod:`forgegym.play.results`, which ``forgegym plot episode`` reads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import gymnasium as gym

from forgegym.play.results import Episode, Results
from forgegym.play.rollouts import batch_from_single, collect_rollouts
from forgegym.policies import Policy
from forgegym.policies import make as make_policy

__all__ = ["RunSummary", "evaluate", "run_episode", "summarise"]


def run_episode(
    env: gym.Env[Any, Any],
    policy: Policy,
    *,
    env_id: str,
    policy_name: str,
    seed: int,
    options: dict[str, Any] | None = None,
    log: TextIO | None = None,
) -> Episode:
    """Play one episode from ``reset(seed=seed)``. With ``log``, print the
    ``[START]``/``[STEP]``/``[END]`` lines."""
    (episode,) = collect_rollouts(
        env,
        batch_from_single(policy),
        episodes=1,
        seed=[seed],
        options=options,
        keep_observations=False,
        env_id=env_id,
        policy_name=policy_name,
        log=log,
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
    on_episode: Callable[[Episode], None] | None = None,
) -> Results:
    """Evaluate ``policy_name`` on ``episodes`` episodes of ``env_id`` (seeds ``seed+i``).

    The policy is built once for the run (``forgegym.policies.make(..., seed=seed)``);
    observations are not stored (prompts can be large). ``log_steps`` (default: on for
    ``llm``) prints the ``[START]``/``[STEP]``/``[END]`` lines; ``on_episode`` is
    called with each finished episode. The family's own statistics, if it has any,
    go to ``metadata["report"]``.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    env = gym.make(env_id, **(env_kwargs or {}))
    try:
        policy = make_policy(policy_name, env, seed=seed)
        log = sys.stdout if (log_steps if log_steps is not None else policy_name == "llm") else None
        played = collect_rollouts(
            env,
            batch_from_single(policy),
            episodes=episodes,
            seed=seed,
            keep_observations=False,
            env_id=env_id,
            policy_name=policy_name,
            on_episode=on_episode,
            log=log,
        )
        results = Results(
            metadata={"env_id": env_id, "policy": policy_name, "seed": seed, "episodes": episodes},
            episodes=played,
        )
        from forgegym.play.telemetry import episode_telemetry

        # The cheating telemetry (gate/hack rates, unparseable share, invalid rewards),
        # the same keys the TRL reward functions log per batch (docs/telemetry.md).
        results.metadata["telemetry"] = episode_telemetry(played)
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


def summarise(results: Results) -> list[RunSummary]:
    """One :class:`RunSummary` per (env, policy) pair, in first-seen order."""
    groups: dict[tuple[str, str], list[Episode]] = {}
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
