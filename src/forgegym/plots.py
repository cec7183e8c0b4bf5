"""Plots of evaluation results and curriculum state (matplotlib, Agg backend).

The results schema lives in :mod:`forgegym.results` (re-exported here):
``forgegym eval`` writes an :class:`EvalResults` JSON (``EvalResults.save``) and
:func:`forgegym.rollouts.to_eval_results` converts rollout trajectories to it.

Plots
-----
* :func:`plot_episode` — the dashboard: step rewards, cumulative reward, score and
  running pass rate per episode, and a heatmap of every reward-breakdown term (and gate)
  on every graded step.
* :func:`plot_curriculum` — pass@k per task over time, tier sizes over time and the
  difficulty of the tasks served, from a :mod:`forgegym.curricula` state file.
* :func:`plot_scores` — score distributions per family.

Every function writes a PNG of a fixed pixel size (``figsize * dpi``; no tight bbox, so
sizes are predictable) and returns its path. matplotlib is imported lazily, so the
schema models work without it (it is in the ``notebook`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.results import EVAL_FORMAT, EvalEpisode, EvalResults, EvalStep

if TYPE_CHECKING:
    from matplotlib.figure import Figure


__all__ = [
    "CURRICULUM_FIGSIZE",
    "EPISODE_FIGSIZE",
    "EVAL_FORMAT",
    "SCORES_FIGSIZE",
    "EvalEpisode",
    "EvalResults",
    "EvalStep",
    "plot_curriculum",
    "plot_episode",
    "plot_scores",
]

#: Figure sizes in inches; at the default ``dpi=100`` the PNGs are 1200x900, 1200x900
#: and 1000x500 pixels.
EPISODE_FIGSIZE: tuple[float, float] = (12.0, 9.0)
CURRICULUM_FIGSIZE: tuple[float, float] = (12.0, 9.0)
SCORES_FIGSIZE: tuple[float, float] = (10.0, 5.0)


# ---------------------------------------------------------------- input coercion
def _read_json(source: Any) -> Any:
    if isinstance(source, (str, Path)):
        return json.loads(Path(source).read_text(encoding="utf-8"))
    return source


def _as_results(source: Any) -> EvalResults:
    """An :class:`EvalResults` from a path, dict, model or list of trajectories."""
    data = _read_json(source)
    if isinstance(data, EvalResults):
        return data
    if isinstance(data, Mapping):
        return EvalResults.model_validate(data)
    if isinstance(data, Sequence):
        from forgegym.rollouts import Trajectory, to_eval_results

        items = [t if isinstance(t, Trajectory) else Trajectory.model_validate(t) for t in data]
        return to_eval_results(items)
    raise TypeError(
        f"results: expected a path, dict, EvalResults or trajectories, got {type(data)}"
    )


def _term_values(breakdown: Mapping[str, Any]) -> dict[str, float]:
    """Term and gate values of a breakdown; tolerant of ``{name: float}`` terms too."""
    values: dict[str, float] = {}
    terms = breakdown.get("terms") or {}
    for name, term in terms.items():
        value = term.get("value") if isinstance(term, Mapping) else term
        if isinstance(value, (int, float)):
            values[str(name)] = float(value)
    for gate in breakdown.get("gates") or []:
        values[f"gate:{gate}"] = 1.0
    for key in ("total", "score"):
        if isinstance(breakdown.get(key), (int, float)):
            values[key] = float(breakdown[key])
    return values


def _agg() -> Any:
    import matplotlib

    # Why: a headless default; notebooks that chose a backend keep it (inline is Agg-based).
    if "inline" not in matplotlib.get_backend().lower():
        matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Figure, out_png: str | Path, dpi: int) -> Path:
    path = Path(out_png)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, format="png")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


# ---------------------------------------------------------------- episode dashboard
def plot_episode(
    results_json: Any, out_png: str | Path, *, episode: int | None = None, dpi: int = 100
) -> Path:
    """The evaluation dashboard: rewards, cumulative reward, pass rate, term heatmap.

    Args:
        results_json: an :class:`EvalResults` (or its JSON path / dict), or trajectories.
        out_png: where to write the PNG (``EPISODE_FIGSIZE * dpi`` pixels).
        episode: plot only this episode index; default every episode, end to end on
            one step axis with episode boundaries marked.
        dpi: resolution.
    """
    results = _as_results(results_json)
    episodes = results.episodes
    if episode is not None:
        if not 0 <= episode < len(episodes):
            raise ValueError(f"episode must be in [0, {len(episodes)}), got {episode}")
        episodes = [episodes[episode]]
    plt = _agg()
    import numpy as np

    fig, axes = plt.subplots(2, 2, figsize=EPISODE_FIGSIZE)
    ax_reward, ax_cum, ax_pass, ax_heat = axes.flat
    title = ", ".join(sorted({f"{e.env_id} / {e.policy}" for e in episodes})) or "no episodes"
    fig.suptitle(f"forgegym evaluation: {title}", fontsize=11)

    rewards = [s.reward for e in episodes for s in e.steps]
    owner = [k for k, e in enumerate(episodes) for _ in e.steps]
    boundaries = np.cumsum([len(e.steps) for e in episodes])[:-1] + 0.5
    x = np.arange(1, len(rewards) + 1)
    if rewards:
        cmap = plt.get_cmap("tab10")
        colors = [cmap(k % 10) for k in owner]
        ax_reward.bar(x, rewards, color=colors)
        ax_reward.axhline(0.0, color="0.3", linewidth=0.8)
        ax_cum.plot(x, np.cumsum(rewards), color="tab:blue", marker="o", markersize=3)
        for ax in (ax_reward, ax_cum):
            for b in boundaries:
                ax.axvline(b, color="0.7", linestyle=":", linewidth=0.8)
    else:
        _empty(ax_reward, "no steps")
        _empty(ax_cum, "no steps")
    ax_reward.set(title="Step reward (colour = episode)", xlabel="step", ylabel="reward")
    ax_cum.set(title="Cumulative reward", xlabel="step", ylabel="sum of rewards")

    if episodes:
        idx = np.arange(1, len(episodes) + 1)
        scores = [e.score for e in episodes]
        passes = np.cumsum([e.success for e in episodes]) / idx
        ax_pass.bar(idx, scores, color="tab:green", alpha=0.5, label="score")
        ax_pass.plot(idx, passes, color="tab:red", marker="o", label="pass rate (running)")
        ax_pass.set_ylim(0, 1.05)
        ax_pass.legend(loc="lower right", fontsize=8)
    else:
        _empty(ax_pass, "no episodes")
    ax_pass.set(title="Score and pass rate", xlabel="episode", ylabel="fraction")

    graded = [
        (i + 1, _term_values(s.reward_breakdown))
        for i, s in enumerate(s for e in episodes for s in e.steps)
        if s.reward_breakdown
    ]
    names: list[str] = []
    for _, values in graded:
        names.extend(n for n in values if n not in names)
    if graded:
        grid = np.full((len(names), len(graded)), np.nan)
        for col, (_, values) in enumerate(graded):
            for row, name in enumerate(names):
                grid[row, col] = values.get(name, np.nan)
        image = ax_heat.imshow(
            np.ma.masked_invalid(grid), aspect="auto", cmap="viridis", interpolation="nearest"
        )
        ax_heat.set_yticks(range(len(names)), names, fontsize=8)
        step = max(1, len(graded) // 12)
        ax_heat.set_xticks(
            range(0, len(graded), step), [graded[c][0] for c in range(0, len(graded), step)]
        )
        fig.colorbar(image, ax=ax_heat, fraction=0.046, pad=0.04)
    else:
        _empty(ax_heat, "no reward breakdowns")
    ax_heat.set(title="Reward-breakdown terms per graded step", xlabel="step")
    fig.subplots_adjust(left=0.12, right=0.96, top=0.92, bottom=0.07, hspace=0.35, wspace=0.3)
    return _save(fig, out_png, dpi)


# ---------------------------------------------------------------- curriculum
def _task_pass_at_k(
    history: Sequence[Sequence[float]], k: int, prior: tuple[float, float]
) -> tuple[list[float], list[float]]:
    """(episodes, pass@k estimates) after each record of one task's history.

    The estimate is the Beta-posterior mean of pass@k from the prior and the task's
    cumulative evidence (what the scheduler's tiers use, before decay), which is defined
    from the first rollout on, unlike the unbiased estimator that needs ``n >= k``.
    """
    from forgegym.curricula import beta_expected_pass_at_k

    a0, b0 = prior
    xs: list[float] = []
    ys: list[float] = []
    successes = trials = 0.0
    for record in history:
        if len(record) < 3:
            continue
        episode, value, n = float(record[0]), float(record[1]), float(record[2])
        successes += value
        trials += n
        xs.append(episode)
        ys.append(beta_expected_pass_at_k(a0 + successes, b0 + trials - successes, k))
    return xs, ys


def plot_curriculum(
    state_json: Any, out_png: str | Path, *, max_tasks: int = 12, dpi: int = 100
) -> Path:
    """Pass@k per task over time, tier sizes over time and difficulty served.

    Reads the :mod:`forgegym.curricula` state (``"forgegym.curriculum/1"``: ``config``,
    ``tasks[*].history`` as ``[episode, successes, trials]``, ``history`` records with
    tier sizes and difficulty, ``timeline``). Missing keys give empty panels, not errors.

    Args:
        state_json: the state file path, or its dict (``CurriculumScheduler.state_dict()``).
        out_png: where to write the PNG (``CURRICULUM_FIGSIZE * dpi`` pixels).
        max_tasks: draw this many most-tried tasks individually (the mean over all is
            always drawn).
        dpi: resolution.
    """
    state = _read_json(state_json)
    if not isinstance(state, Mapping):
        raise TypeError(f"state_json: expected a curriculum state mapping, got {type(state)}")
    config = state.get("config") or {}
    k = int(config.get("k", 1))
    prior = (float(config.get("prior_alpha", 1.0)), float(config.get("prior_beta", 1.0)))
    tasks: Mapping[str, Any] = state.get("tasks") or {}
    records: list[Mapping[str, Any]] = [
        r for r in state.get("history") or [] if isinstance(r, Mapping)
    ]
    timeline: list[Mapping[str, Any]] = [
        r for r in state.get("timeline") or [] if isinstance(r, Mapping)
    ]
    plt = _agg()
    import numpy as np

    fig, (ax_task, ax_tier, ax_diff) = plt.subplots(3, 1, figsize=CURRICULUM_FIGSIZE)
    fig.suptitle(
        f"Curriculum: {len(tasks)} tasks, {state.get('episode', '?')} rollouts", fontsize=11
    )

    curves = {
        task_id: _task_pass_at_k(info.get("history") or [], k, prior)
        for task_id, info in tasks.items()
        if isinstance(info, Mapping)
    }
    curves = {t: c for t, c in curves.items() if c[0]}
    if curves:
        ranked = sorted(curves, key=lambda t: (-len(curves[t][0]), t))
        cmap = plt.get_cmap("tab20")
        for j, task_id in enumerate(ranked[:max_tasks]):
            xs, ys = curves[task_id]
            ax_task.step(
                xs, ys, where="post", color=cmap(j % 20), linewidth=1, alpha=0.8, label=task_id
            )
        # Mean over every task seen so far, carrying each task's last estimate forward.
        grid = sorted({x for xs, _ in curves.values() for x in xs})
        means = []
        for x in grid:
            current = [
                ys[int(np.searchsorted(xs, x, side="right")) - 1]
                for xs, ys in curves.values()
                if xs[0] <= x
            ]
            means.append(float(np.mean(current)))
        ax_task.plot(grid, means, color="black", linewidth=2.5, label="mean (all tasks)")
        too_easy = config.get("too_easy")
        too_hard = config.get("too_hard")
        for level, style in ((too_easy, "--"), (too_hard, ":")):
            if isinstance(level, (int, float)):
                ax_task.axhline(level, color="0.4", linestyle=style, linewidth=1)
        ax_task.set_ylim(0, 1.02)
        ax_task.legend(fontsize=6, ncol=4, loc="lower right")
    else:
        _empty(ax_task, "no per-task history")
    ax_task.set(
        title=f"pass@{k} per task (Beta posterior mean)", xlabel="rollouts", ylabel=f"pass@{k}"
    )

    tier_points = sorted(
        (
            (float(r["episode"]), r)
            for r in [*records, *timeline]
            if "episode" in r and "learnable" in r
        ),
        key=lambda point: point[0],
    )
    if tier_points:
        xs = [x for x, _ in tier_points]
        for tier, color in (
            ("too_easy", "tab:green"),
            ("learnable", "tab:blue"),
            ("too_hard", "tab:red"),
        ):
            ax_tier.step(
                xs,
                [int(r.get(tier, 0)) for _, r in tier_points],
                where="post",
                color=color,
                label=tier,
            )
        ax_tier.legend(fontsize=8, loc="upper left")
    elif isinstance(state.get("tier_sizes"), Mapping):
        sizes = state["tier_sizes"]
        ax_tier.bar(
            list(sizes),
            [int(v) for v in sizes.values()],
            color=["tab:green", "tab:blue", "tab:red"][: len(sizes)],
        )
    else:
        _empty(ax_tier, "no tier history")
    ax_tier.set(title="Tier sizes over time", xlabel="rollouts", ylabel="tasks")

    served = [
        (float(r["episode"]), float(r["difficulty"]), float(r.get("success", np.nan)))
        for r in records
        if r.get("difficulty") is not None and "episode" in r
    ]
    if served:
        xs_a, ds, ss = (np.array(v) for v in zip(*served, strict=True))
        window = max(1, min(20, len(ds) // 5))
        kernel = np.ones(window) / window
        ax_diff.scatter(
            xs_a,
            ds,
            c=np.nan_to_num(ss, nan=0.5),
            cmap="RdYlGn",
            vmin=0,
            vmax=1,
            s=12,
            alpha=0.6,
            label="served (colour = success)",
        )
        if len(ds) >= window:
            ax_diff.plot(
                xs_a[window - 1 :],
                np.convolve(ds, kernel, mode="valid"),
                color="black",
                linewidth=2,
                label=f"mean difficulty ({window}-rollout window)",
            )
        ax_diff.legend(fontsize=8, loc="upper left")
    else:
        _empty(ax_diff, "no difficulty records")
    ax_diff.set(title="Difficulty of the tasks served", xlabel="rollouts", ylabel="difficulty")
    fig.subplots_adjust(left=0.08, right=0.97, top=0.93, bottom=0.06, hspace=0.5)
    return _save(fig, out_png, dpi)


# ---------------------------------------------------------------- scores
def plot_scores(trajectories: Any, out_png: str | Path, *, dpi: int = 100) -> Path:
    """Score distributions per family (box plot plus every episode as a dot).

    Args:
        trajectories: :class:`~forgegym.rollouts.Trajectory` objects, an
            :class:`EvalResults`, or a path to either's JSON.
        out_png: where to write the PNG (``SCORES_FIGSIZE * dpi`` pixels).
        dpi: resolution.
    """
    results = _as_results(trajectories)
    groups: dict[str, list[EvalEpisode]] = {}
    for ep in results.episodes:
        groups.setdefault(ep.group, []).append(ep)
    plt = _agg()
    import numpy as np

    fig, ax = plt.subplots(figsize=SCORES_FIGSIZE)
    if groups:
        names = sorted(groups)
        data = [[e.score for e in groups[n]] for n in names]
        ax.boxplot(data, widths=0.5, showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), names)
        rng = np.random.default_rng(0)  # fixed jitter: the same PNG for the same data
        cmap = plt.get_cmap("tab10")
        for j, name in enumerate(names, start=1):
            scores = np.array(data[j - 1])
            jitter = rng.uniform(-0.15, 0.15, size=len(scores))
            success = np.array([e.success for e in groups[name]])
            ax.scatter(j + jitter, scores, s=18, color=cmap(j % 10), alpha=0.7, edgecolors="none")
            ax.annotate(
                f"n={len(scores)}, pass {success.mean():.0%}, mean {scores.mean():.2f}",
                (j, 1.06),
                ha="center",
                fontsize=8,
            )
        ax.set_ylim(-0.05, 1.12)
    else:
        _empty(ax, "no episodes")
    policies = sorted({e.policy for e in results.episodes if e.policy})
    ax.set(
        title="Score per family" + (f" ({', '.join(policies)})" if policies else ""),
        xlabel="family",
        ylabel="score",
    )
    fig.subplots_adjust(left=0.08, right=0.97, top=0.88, bottom=0.12)
    return _save(fig, out_png, dpi)
