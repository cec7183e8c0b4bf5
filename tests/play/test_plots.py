"""The plots: what they draw (axes, series, labels, titles, ticks, signs), which inputs
they refuse, and the file format the output's suffix names."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from forgegym.curricula import PassAtKCurriculum
from forgegym.play.plots import (
    CURRICULUM_FIGSIZE,
    EPISODE_FIGSIZE,
    SCORES_FIGSIZE,
    EvalEpisode,
    EvalResults,
    EvalStep,
    curriculum_figure,
    episode_figure,
    plot_curriculum,
    plot_episode,
    plot_scores,
    scores_figure,
)
from forgegym.play.rollouts import Trajectory, collect_rollouts, to_eval_results
from tests.core.test_vector import TOY_ID, ToyEnv, toy_answer

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-", "svg": b"<svg"}


def assert_png(path: Path, figsize: tuple[float, float], dpi: int = 100) -> None:
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == MAGIC["png"]
    image = mpimg.imread(path)
    assert image.shape[:2] == (round(figsize[1] * dpi), round(figsize[0] * dpi))
    pixels = image[..., :3].reshape(-1, 3)
    assert len(np.unique(pixels, axis=0)) > 1


def assert_integer_ticks(axis: object) -> None:
    low, high = axis.get_view_interval()  # type: ignore[attr-defined]
    ticks = [t for t in axis.get_majorticklocs() if low <= t <= high]  # type: ignore[attr-defined]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks


def assert_inside_figure(fig: object, *artists: object) -> None:
    """Each artist is drawn inside the figure's pixels (call after ``fig.canvas.draw()``)."""
    width, height = fig.canvas.get_width_height()  # type: ignore[attr-defined]
    for artist in artists:
        box = artist.get_window_extent()  # type: ignore[attr-defined]
        assert box.x0 >= 0 and box.x1 <= width and box.y0 >= 0 and box.y1 <= height, box


def breakdown(hidden: float, noop: float, gates: list[str] | None = None) -> dict:
    terms = {
        "hidden": {"name": "hidden", "value": hidden, "weight": 3.0, "kind": "credit"},
        "noop": {"name": "noop", "value": noop, "weight": 1.0, "kind": "penalty"},
    }
    total = -1.0 if gates else hidden - noop
    return {"terms": {} if gates else terms, "gates": gates or [], "total": total, "score": 0.0}


def episode(env_id: str, policy: str, rewards: list[float], score: float, **bd: object) -> dict:
    steps = [EvalStep(reward=r) for r in rewards]
    steps[-1] = EvalStep(reward=rewards[-1], reward_breakdown=breakdown(**bd))  # type: ignore[arg-type]
    return EvalEpisode(
        env_id=env_id,
        policy=policy,
        task_id=f"{policy}-task",
        score=score,
        success=score >= 1.0,
        steps=steps,
    ).model_dump()


#: Two envs x two policies, episodes of different lengths; the noop's penalty is 1.0.
MIXED = EvalResults.model_validate(
    {
        "episodes": [
            episode("Forge/Bugfix-v0", "noop", [-0.2], 0.0, hidden=0.0, noop=1.0),
            episode("Forge/Bugfix-v0", "noop", [-0.2], 0.0, hidden=0.0, noop=1.0),
            episode("Forge/Bugfix-v0", "reference", [0.0, 0.0, 0.9], 1.0, hidden=1.0, noop=0.0),
            episode("Forge/Oversight-v0", "reference", [1.0], 1.0, hidden=1.0, noop=0.0),
            episode(
                "Forge/Oversight-v0", "noop", [-0.1, 0.0], 0.0, hidden=0, noop=0, gates=["unsafe"]
            ),
        ]
    }
)
GROUPS = ["Bugfix-v0 noop", "Bugfix-v0 reference", "Oversight-v0 reference", "Oversight-v0 noop"]


def test_episode_dashboard_groups_by_env_and_policy() -> None:
    fig = episode_figure(MIXED)
    ax_cum, ax_step, ax_score, ax_heat = fig.axes[:4]
    assert ax_cum.get_title() == "Cumulative reward within each episode"
    assert ax_cum.get_xlabel() == "step of the episode"
    assert ax_step.get_ylabel() == "step reward"
    # One cumulative line per episode, restarting at 0 each time (never summed across
    # episodes, policies or environments).
    lines = ax_cum.get_lines()[: len(MIXED.episodes)]
    for line, ep in zip(lines, MIXED.episodes, strict=True):
        assert list(line.get_xdata()) == list(range(1, len(ep.steps) + 1))
        assert np.allclose(line.get_ydata(), np.cumsum([s.reward for s in ep.steps]))
    # One colour per (env, policy): the two Bugfix noop episodes share theirs, others differ.
    colours = [line.get_color() for line in lines]
    assert colours[0] == colours[1] and len(set(colours)) == 4
    legend = [t.get_text() for t in ax_cum.get_legend().get_texts()]
    assert [" ".join(t.replace("·", " ").split()) for t in legend] == GROUPS
    # Score per group with each group's own pass count; no running pass-rate line.
    ticks = [" ".join(t.get_text().split()) for t in ax_score.get_yticklabels()]
    assert ticks == GROUPS
    assert ax_score.get_lines() == []
    passes = [t.get_text() for t in ax_score.texts]
    assert passes == ["pass 0/2", "pass 1/1", "pass 1/1", "pass 0/1"]
    assert [round(p.get_width(), 6) for p in ax_score.patches] == [0.0, 1.0, 1.0, 0.0]
    assert ax_score.get_xlabel() == "score"
    for ax in (ax_cum, ax_step):
        assert_integer_ticks(ax.xaxis)


def test_heatmap_draws_penalties_and_gates_negative() -> None:
    fig = episode_figure(MIXED)
    ax_heat = fig.axes[3]
    terms = [t.get_text() for t in ax_heat.get_xticklabels()]
    assert terms == ["hidden", "noop (penalty)", "gate: unsafe", "total", "score"]
    assert [" ".join(t.get_text().split()) for t in ax_heat.get_yticklabels()] == GROUPS
    grid = ax_heat.images[0].get_array()
    assert grid.shape == (4, 5)  # four groups (rows: group means) x five terms
    noop, gate = grid[:, terms.index("noop (penalty)")], grid[:, terms.index("gate: unsafe")]
    assert noop[0] == -1.0 and noop[1] == 0.0  # Bugfix noop's penalty of 1.0 is drawn -1
    assert np.ma.is_masked(noop[3])  # not computed where the gate fired: grey, not 0
    assert list(gate) == [0.0, 0.0, 0.0, -1.0]
    assert grid[1, terms.index("hidden")] == 1.0
    image = ax_heat.images[0]
    assert image.get_clim() == (-1.0, 1.0) and image.get_cmap().name.startswith("RdBu")
    # One group: a column per graded episode, labelled by its index in the results.
    one = episode_figure(MIXED, episode=2).axes[3]
    assert [t.get_text() for t in one.get_yticklabels()] == ["ep 2"]


def test_titles_stay_on_the_figure() -> None:
    long = EvalResults.model_validate(
        {
            "episodes": [
                episode(
                    f"Forge/Very-Long-Environment-Name-{i}-v0",
                    "p" * 60,
                    [0.1],
                    0.5,
                    hidden=0.5,
                    noop=0.0,
                )
                for i in range(6)
            ]
        }
    )
    fig = episode_figure(long)
    title = fig.get_suptitle()
    assert len(title.splitlines()) <= 2 and all(len(line) <= 110 for line in title.splitlines())
    assert title.endswith("…")
    fig.canvas.draw()
    assert_inside_figure(fig, fig._suptitle)
    for ax in (fig.axes[2], fig.axes[3]):  # group names beside the score bars and heatmap
        boxes = [t.get_window_extent() for t in ax.get_yticklabels() if t.get_text()]
        assert len(boxes) == 6
        for upper, lower in zip(boxes, boxes[1:], strict=False):
            assert lower.y1 < upper.y0, "tick labels overlap"
        assert_inside_figure(fig, *ax.get_yticklabels())


def test_step_axes_have_integer_ticks_even_for_one_step_episodes() -> None:
    fig = episode_figure(MIXED, episode=0)  # one episode of one step
    for ax in fig.axes[:2]:
        assert_integer_ticks(ax.xaxis)
        assert [t for t in ax.get_xticks() if 0.5 <= t <= 1.5] == [1.0]


def test_plot_episode_writes_the_format_its_suffix_names(tmp_path: Path) -> None:
    path = MIXED.save(tmp_path / "results.json")
    assert_png(plot_episode(path, tmp_path / "plots" / "dash.png"), EPISODE_FIGSIZE)
    assert_png(plot_episode(MIXED, tmp_path / "one.png", episode=0, dpi=50), EPISODE_FIGSIZE, 50)
    assert plot_episode(path, tmp_path / "dash.pdf").read_bytes().startswith(MAGIC["pdf"])
    assert MAGIC["svg"] in plot_episode(path, tmp_path / "dash.svg").read_bytes()[:2000]
    with pytest.raises(ValueError, match="suffix"):
        plot_episode(path, tmp_path / "dash.txt")
    with pytest.raises(ValueError, match=r"episode must be in \[0, 5\)"):
        plot_episode(MIXED, tmp_path / "bad.png", episode=99)


def test_plots_refuse_the_wrong_file(tmp_path: Path) -> None:
    state = {"format": "forgegym.curriculum/1", "config": {}, "tasks": {}, "episode": 0}
    with pytest.raises(ValueError, match="got a curriculum state"):
        plot_episode(state, tmp_path / "x.png")
    with pytest.raises(ValueError, match="got eval results"):
        plot_curriculum(MIXED.model_dump(), tmp_path / "x.png")
    with pytest.raises(ValueError, match="got a learning report"):
        plot_episode({"kind": "forgegym.integrations.learning", "stages": []}, tmp_path / "x.png")
    with pytest.raises(ValueError, match="no episodes"):
        plot_episode(EvalResults(), tmp_path / "x.png")
    with pytest.raises(ValueError, match=r"episodes\.0\.policy: Field required"):
        plot_episode(
            {"format": "forgegym.eval/1", "episodes": [{"env_id": "x"}]}, tmp_path / "x.png"
        )
    with pytest.raises(ValueError, match="got an empty object"):
        plot_curriculum({}, tmp_path / "x.png")
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------- from real rollouts
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


def test_plot_episode_from_rollouts(tmp_path: Path, results: EvalResults) -> None:
    path = results.save(tmp_path / "results.json")
    assert EvalResults.load(path) == results
    fig = episode_figure(path)
    ax_cum = fig.axes[0]
    with_steps = [e for e in results.episodes if e.steps]
    assert len(ax_cum.get_lines()) == len(with_steps) + 1  # + the zero line
    assert_png(plot_episode(path, tmp_path / "episode.png"), EPISODE_FIGSIZE)


def test_plot_scores(tmp_path: Path, results: EvalResults) -> None:
    trajectories = toy_trajectories(4)
    for t in trajectories[:2]:
        t.family = "other"
    fig = scores_figure(trajectories)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == sorted({t.family for t in trajectories})
    assert ax.get_ylabel() == "score" and ax.get_title().startswith("Score per family")
    assert_png(plot_scores(trajectories, tmp_path / "scores.png"), SCORES_FIGSIZE)
    # Several policies: one box per family and policy, never one pooled pass rate.
    mixed = scores_figure(MIXED).axes[0]
    boxes = [" ".join(t.get_text().split()) for t in mixed.get_xticklabels()]
    assert boxes == sorted(
        " ".join(g.replace("-v0", "-v0 ").split())
        for g in [
            "Forge/Bugfix-v0 noop",
            "Forge/Bugfix-v0 reference",
            "Forge/Oversight-v0 noop",
            "Forge/Oversight-v0 reference",
        ]
    )
    notes = [" ".join(t.get_text().split()) for t in mixed.texts]
    assert notes[0] == "n=2 pass 0% mean 0.00" and notes[1] == "n=1 pass 100% mean 1.00"
    assert mixed.get_xlabel() == "family · policy"
    assert plot_scores(results, tmp_path / "scores.pdf").read_bytes().startswith(MAGIC["pdf"])


def test_plot_curriculum(tmp_path: Path) -> None:
    env = PassAtKCurriculum(ToyEnv(max_steps=1), config={"k": 2, "min_learnable": 2, "seed": 0})
    rng = np.random.default_rng(0)
    for _ in range(40):
        _, info = env.reset()
        # Succeed more often on easy tasks, so tiers and estimates spread out.
        solve = rng.random() < 1.0 / info["difficulty"]
        env.step(toy_answer(info["task_id"]) if solve else "{}")
    state_path = env.save(tmp_path / "state.json")
    fig = curriculum_figure(state_path, max_tasks=5)
    ax_task, ax_tier, ax_diff = fig.axes[:3]
    assert ax_task.get_title().startswith("pass@2 per task") and ax_task.get_ylabel() == "pass@2"
    labels = [t.get_text() for t in ax_task.get_legend().get_texts()]
    assert len(labels) == 5 + 3 and "mean (all tasks)" in labels  # 5 tasks, mean, 2 levels
    mean = next(line for line in ax_task.get_lines() if line.get_label() == "mean (all tasks)")
    assert min(mean.get_ydata()) >= 0.0 and max(mean.get_ydata()) <= 1.0
    tiers = {line.get_label(): line for line in ax_tier.get_lines()}
    assert set(tiers) == {"too easy", "learnable", "too hard"}
    sizes = sum(np.asarray(tiers[name].get_ydata())[-1] for name in tiers)
    assert sizes == sum(env.scheduler.state_dict()["tier_sizes"].values())  # type: ignore[attr-defined]
    for ax in (ax_task, ax_tier, ax_diff):
        assert ax.get_xlabel() == "rollouts"
        assert_integer_ticks(ax.xaxis)
    assert_integer_ticks(ax_tier.yaxis)
    assert_integer_ticks(ax_diff.yaxis)
    assert_png(plot_curriculum(state_path, tmp_path / "curriculum.png"), CURRICULUM_FIGSIZE)
    assert MAGIC["svg"] in plot_curriculum(state_path, tmp_path / "c.svg").read_bytes()[:2000]


def _short_run(tmp_path: Path, rollouts: int) -> Path:
    env = PassAtKCurriculum(ToyEnv(max_steps=1), config={"k": 2, "min_learnable": 2, "seed": 0})
    rng = np.random.default_rng(0)
    for _ in range(rollouts):
        _, info = env.reset()
        env.step(toy_answer(info["task_id"]) if rng.random() < 0.5 else "{}")
    return env.save(tmp_path / "state.json")


def test_curriculum_after_a_short_run_shows_points_aligned_axes_and_success(
    tmp_path: Path,
) -> None:
    fig = curriculum_figure(_short_run(tmp_path, 3))
    ax_task, ax_tier, ax_diff = fig.axes[:3]
    tasks = [line for line in ax_task.get_lines() if line.get_label().startswith("toy/")]
    assert tasks and all(len(line.get_xdata()) == 1 for line in tasks)  # one point each
    assert all(line.get_marker() not in (None, "None", "") for line in tasks)
    assert ax_task.get_xlim() == ax_tier.get_xlim() == ax_diff.get_xlim()
    legend = [t.get_text() for t in ax_diff.get_legend().get_texts()]
    assert any("solved" in name or "failed" in name for name in legend), legend


def test_heatmap_labels_and_values_do_not_collide_with_many_terms() -> None:
    kinds = {"hidden": "credit", "visible": "credit", "lint": "credit", "diff": "credit"}
    kinds |= {"efficiency": "credit", "notes": "credit", "regression": "penalty"}
    kinds |= {"noop": "penalty", "diff_penalty": "penalty", "format": "step", "shaping": "shaping"}
    terms = {
        n: {"name": n, "value": -0.5 if k == "step" else 0.5, "weight": 1.0, "kind": k}
        for n, k in kinds.items()
    }
    many = {"terms": terms, "gates": [], "total": 0.5, "score": 0.5}
    episodes = [
        EvalEpisode(
            env_id="Forge/FlakyRepair-v0",
            policy=policy,
            task_id="t",
            score=0.5,
            success=False,
            steps=[EvalStep(reward=0.5, reward_breakdown=many)],  # type: ignore[arg-type]
        ).model_dump()
        for policy in ("noop", "reference", "partial")
    ]
    fig = episode_figure(EvalResults.model_validate({"episodes": episodes}).model_dump())
    fig.canvas.draw()
    heat = fig.axes[3]
    labels = [t.get_window_extent() for t in heat.get_xticklabels() if t.get_text()]
    assert len(labels) >= 12
    assert not any(a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1 :])
    rows: dict[float, list[object]] = {}
    for text in heat.texts:
        rows.setdefault(round(text.get_position()[1]), []).append(
            text.get_window_extent().padded(1)
        )
    for boxes in rows.values():
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
