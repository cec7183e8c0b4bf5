"""forgegym.play.evaluation: an eval is the rollout loop on one env, so eval results and
collected rollouts are the same records, with the same rewards, for the same seeds."""

from __future__ import annotations

import io

import gymnasium as gym
import pytest

from forgegym.play.evaluation import evaluate, run_episode, summarise
from forgegym.play.results import Episode, Results
from forgegym.play.rollouts import baseline_policy, collect_rollouts
from forgegym.policies import make as make_policy


@pytest.mark.parametrize(
    ("env_id", "policies", "mode"),
    [
        ("Forge/Oversight-v0", ["reference", "noop", "random", "baseline:keyword"], "async"),
        ("Forge/Bugfix-v0", ["reference", "noop"], "sync"),
    ],
)
def test_eval_and_rollouts_are_the_same_records(
    env_id: str, policies: list[str], mode: str
) -> None:
    episodes, seed = 4, 7
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode)
    try:
        for policy in policies:
            evaluated = evaluate(env_id, policy, episodes=episodes, seed=seed)
            collected = collect_rollouts(
                envs,
                baseline_policy(policy, env_id, seed=seed),
                episodes=episodes,
                seed=seed,
                keep_observations=False,
            )
            assert all(type(e) is Episode for e in [*evaluated.episodes, *collected])
            assert [e.seed for e in evaluated.episodes] == list(range(seed, seed + episodes))
            # Identical records but for which env of the vector env played each episode.
            assert [e.model_dump(exclude={"env_index"}) for e in evaluated.episodes] == [
                e.model_dump(exclude={"env_index"}) for e in collected
            ], policy
    finally:
        envs.close()


def test_eval_distinguishes_policies_and_reports_the_family() -> None:
    reference = evaluate("Forge/Oversight-v0", "reference", episodes=3, seed=0)
    noop = evaluate("Forge/Oversight-v0", "noop", episodes=3, seed=0)
    # Same tasks for both policies, different outcomes: the comparison is paired.
    assert [e.task_id for e in reference.episodes] == [e.task_id for e in noop.episodes]
    both = Results(episodes=[*reference.episodes, *noop.episodes])
    runs = {run.policy: run for run in summarise(both)}
    assert runs["reference"].mean_score > runs["noop"].mean_score
    assert runs["reference"].mean_reward == pytest.approx(
        sum(e.total_reward for e in reference.episodes) / 3
    )
    assert reference.metadata["env_id"] == "Forge/Oversight-v0" and "report" in reference.metadata
    with pytest.raises(ValueError, match="episodes"):
        evaluate("Forge/Oversight-v0", "noop", episodes=0)


def test_run_episode_logs_the_episode() -> None:
    env = gym.make("Forge/Oversight-v0")
    log = io.StringIO()
    try:
        policy = make_policy("reference", env)
        episode = run_episode(
            env, policy, env_id="Forge/Oversight-v0", policy_name="reference", seed=2, log=log
        )
    finally:
        env.close()
    assert episode.seed == 2 and episode.success and episode.initial_observation is None
    lines = log.getvalue().splitlines()
    assert lines[0] == f"[START] task={episode.task_id} env=Forge/Oversight-v0 model=reference"
    assert lines[-1].startswith("[END] success=true")
