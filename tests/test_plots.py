"""The plot functions write PNGs of the expected size with real content."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from forgegym.curricula import PassAtKCurriculum
from forgegym.plots import (
    CURRICULUM_FIGSIZE,
    EPISODE_FIGSIZE,
    SCORES_FIGSIZE,
    EvalEpisode,
    EvalResults,
    EvalStep,
    plot_curriculum,
    plot_episode,
    plot_scores,
)
from forgegym.rollouts import Trajectory, collect_rollouts, to_eval_results
from tests.test_vector import TOY_ID, ToyEnv, toy_answer


def assert_png(path: Path, figsize: tuple[float, float], dpi: int = 100) -> None:
    import matplotlib.image as mpimg

    image = mpimg.imread(path)
    assert image.shape[:2] == (round(figsize[1] * dpi), round(figsize[0] * dpi))
    pixels = image[..., :3].reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 1


def toy_trajectories(episodes: int = 6) -> list[Trajectory]:
    def policy(observations: list[str], infos: list[dict]) -> list[str]:
        # Solve even-numbered steps' tasks, fumble the others: varied rewards and terms.
        return [
            toy_answer(info["task_id"]) if len(info["task_id"]) % 2 else "not json"
            for info in infos
        ]

    envs = gym.make_vec(TOY_ID, num_envs=2)
    try:
        return collect_rollouts(envs, policy, episodes=episodes, seed=0, policy_name="mixed")
    finally:
        envs.close()


@pytest.fixture(scope="module")
def results() -> EvalResults:
    return to_eval_results(toy_trajectories())


def test_plot_episode(tmp_path: Path, results: EvalResults) -> None:
    path = results.save(tmp_path / "results.json")
    assert EvalResults.load(path) == results
    out = plot_episode(path, tmp_path / "plots" / "episode.png")
    assert_png(out, EPISODE_FIGSIZE)
    assert_png(plot_episode(results, tmp_path / "one.png", episode=0, dpi=50), EPISODE_FIGSIZE, 50)
    with pytest.raises(ValueError, match="episode"):
        plot_episode(results, tmp_path / "bad.png", episode=99)


def test_plot_episode_tolerates_minimal_results(tmp_path: Path) -> None:
    minimal = EvalResults(
        episodes=[
            EvalEpisode(
                env_id="X-v0",
                policy="p",
                task_id="t",
                score=0.5,
                success=False,
                steps=[
                    EvalStep(reward=0.1),
                    EvalStep(reward=0.4, reward_breakdown={"terms": {"a": 0.5}, "gates": ["g"]}),
                ],
            )
        ]
    )
    assert_png(plot_episode(minimal.model_dump(), tmp_path / "m.png"), EPISODE_FIGSIZE)
    assert_png(plot_episode(EvalResults(), tmp_path / "empty.png"), EPISODE_FIGSIZE)


def test_plot_scores(tmp_path: Path, results: EvalResults) -> None:
    trajectories = toy_trajectories(4)
    for t in trajectories[:2]:
        t.family = "other"
    assert_png(plot_scores(trajectories, tmp_path / "scores.png"), SCORES_FIGSIZE)
    assert_png(plot_scores(results, tmp_path / "scores2.png"), SCORES_FIGSIZE)


def test_plot_curriculum(tmp_path: Path) -> None:
    env = PassAtKCurriculum(ToyEnv(max_steps=1), config={"k": 2, "min_learnable": 2, "seed": 0})
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, info = env.reset()
        # Succeed more often on easy tasks, so tiers and estimates spread out.
        solve = rng.random() < 1.0 / info["difficulty"]
        env.step(toy_answer(info["task_id"]) if solve else "{}")
    state_path = env.save(tmp_path / "state.json")
    assert_png(plot_curriculum(state_path, tmp_path / "curriculum.png"), CURRICULUM_FIGSIZE)
    assert_png(plot_curriculum({}, tmp_path / "empty.png"), CURRICULUM_FIGSIZE)
