"""Pass@k per task, tier sizes and difficulty served over time, from a curriculum state
(:func:`plot_curriculum`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.play.plots.common import (
    CURRICULUM_FIGSIZE,
    _agg,
    _as_state,
    _empty,
    _integer_axis,
    _save,
    _shorten,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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


def curriculum_figure(state_json: Any, *, max_tasks: int = 12) -> Figure:
    """The figure :func:`plot_curriculum` writes (see there)."""
    state = _as_state(state_json)
    config = state.get("config") or {}
    tasks: Mapping[str, Any] = state.get("tasks") or {}
    records: list[Mapping[str, Any]] = [
        r for r in state.get("history") or [] if isinstance(r, Mapping)
    ]
    timeline: list[Mapping[str, Any]] = [
        r for r in state.get("timeline") or [] if isinstance(r, Mapping)
    ]
    plt = _agg()
    fig, (ax_task, ax_tier, ax_diff) = plt.subplots(
        3, 1, figsize=CURRICULUM_FIGSIZE, layout="constrained"
    )
    fig.suptitle(
        f"Curriculum: {len(tasks)} tasks in the pool, {state.get('episode', '?')} rollouts",
        fontsize=11,
    )
    _draw_task_curves(ax_task, plt, tasks, config, max_tasks)
    _draw_tier_sizes(ax_tier, state, records, timeline)
    _draw_difficulty(ax_diff, records)
    _share_rollout_axis((ax_task, ax_tier, ax_diff))
    return fig


def _draw_task_curves(
    ax_task: Axes, plt: Any, tasks: Mapping[str, Any], config: Mapping[str, Any], max_tasks: int
) -> None:
    """Pass@k per task (the ``max_tasks`` most tried), their mean and the tier thresholds."""
    import numpy as np

    k = int(config.get("k", 1))
    prior = (float(config.get("prior_alpha", 1.0)), float(config.get("prior_beta", 1.0)))
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
                xs,
                ys,
                where="post",
                color=cmap(j % 20),
                linewidth=1,
                alpha=0.8,
                # Markers: a task tried once is a single point, which a bare line hides.
                marker="o",
                markersize=3,
                zorder=3,  # above the mean line, which a one-rollout task otherwise sits under
                label=_shorten(task_id, 30),
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
        ax_task.plot(
            grid,
            means,
            color="black",
            linewidth=2.5,
            marker="o" if len(grid) < 30 else None,
            markersize=4,
            label="mean (all tasks)",
        )
        too_easy = config.get("too_easy")
        too_hard = config.get("too_hard")
        for level, style, name in ((too_easy, "--", "too easy"), (too_hard, ":", "too hard")):
            if isinstance(level, (int, float)):
                ax_task.axhline(
                    level, color="0.4", linestyle=style, linewidth=1, label=f"{name} ({level:g})"
                )
        ax_task.set_ylim(0, 1.02)
        ax_task.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5))
    else:
        _empty(ax_task, "no per-task history")
    shown = f"the {min(max_tasks, len(curves))} most-tried tasks" if curves else "tasks"
    ax_task.set(
        title=f"pass@{k} per task (Beta posterior mean), {shown}",
        xlabel="rollouts",
        ylabel=f"pass@{k}",
    )


def _draw_tier_sizes(
    ax_tier: Axes,
    state: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    timeline: Sequence[Mapping[str, Any]],
) -> None:
    """Tier sizes over time (from the rollout records and the timeline), else now."""
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
                marker="o" if len(xs) < 30 else None,
                markersize=3,
                label=tier.replace("_", " "),
            )
        ax_tier.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
        ax_tier.set(title="Tier sizes over time", xlabel="rollouts", ylabel="tasks")
    elif isinstance(state.get("tier_sizes"), Mapping):
        sizes = state["tier_sizes"]
        ax_tier.bar(
            [str(name).replace("_", " ") for name in sizes],
            [int(v) for v in sizes.values()],
            color=["tab:green", "tab:blue", "tab:red"][: len(sizes)],
        )
        ax_tier.set(title="Tier sizes now (no history yet)", xlabel="tier", ylabel="tasks")
    else:
        _empty(ax_tier, "no tier history")
        ax_tier.set(title="Tier sizes over time")
    _integer_axis(ax_tier.yaxis)


def _draw_difficulty(ax_diff: Axes, records: Sequence[Mapping[str, Any]]) -> None:
    """The difficulty of each task served, coloured by outcome, and its running mean."""
    import numpy as np

    served = [
        (float(r["episode"]), float(r["difficulty"]), float(r.get("success", np.nan)))
        for r in records
        if r.get("difficulty") is not None and "episode" in r
    ]
    if served:
        xs_a, ds, ss = (np.array(v) for v in zip(*served, strict=True))
        window = max(1, min(20, len(ds) // 5))
        kernel = np.ones(window) / window
        # One scatter per outcome, so that the legend says which colour is a success.
        for mask, color, name in (
            (ss == 1.0, "tab:green", "served, solved"),
            (ss == 0.0, "tab:red", "served, failed"),
            (np.isnan(ss), "0.5", "served, outcome unknown"),
        ):
            if mask.any():
                ax_diff.scatter(xs_a[mask], ds[mask], color=color, s=14, alpha=0.7, label=name)
        if len(ds) >= window:
            ax_diff.plot(
                xs_a[window - 1 :],
                np.convolve(ds, kernel, mode="valid"),
                color="black",
                linewidth=2,
                label=f"mean difficulty ({window}-rollout window)",
            )
        ax_diff.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
        _integer_axis(ax_diff.yaxis)
    else:
        _empty(ax_diff, "no difficulty records")
    ax_diff.set(title="Difficulty of the tasks served", xlabel="rollouts", ylabel="difficulty")


def _share_rollout_axis(axes: Sequence[Axes]) -> None:
    """One rollout axis for the panels that have one, with integer ticks."""
    # One rollout axis for the three panels: each panel's data starts at a different
    # rollout (the tier timeline at 0), so their own limits put rollout 1 at three places.
    timed = [ax for ax in axes if ax.get_xlabel() == "rollouts"]
    xs_all = [
        float(x)
        for ax in timed
        for artist in [*ax.get_lines(), *ax.collections]
        for x in _x_data(artist)
    ]
    if xs_all:
        low, high = min(xs_all), max(xs_all)
        pad = max(0.5, (high - low) * 0.03)
        for ax in timed:
            ax.set_xlim(low - pad, high + pad)
    for ax in timed:
        _integer_axis(ax.xaxis)


def _x_data(artist: Any) -> list[float]:
    """The x values a line or scatter draws (reference lines spanning the axes excluded)."""
    import numpy as np

    if hasattr(artist, "get_xdata"):
        if artist.get_transform() is not artist.axes.transData:
            return []  # axhline: x in axes coordinates
        return [float(x) for x in np.asarray(artist.get_xdata(), dtype=float).ravel()]
    offsets = np.asarray(artist.get_offsets(), dtype=float)
    return [float(x) for x in offsets[:, 0]] if offsets.size else []


def plot_curriculum(
    state_json: Any, out: str | Path, *, max_tasks: int = 12, dpi: int = 100
) -> Path:
    """Pass@k per task over time, tier sizes over time and difficulty served.

    Reads a :mod:`forgegym.curricula` state (format ``"forgegym.curriculum/1"``:
    ``config``, ``tasks[*].history`` as ``[episode, successes, trials]``, ``history``
    records with tier sizes and difficulty, ``timeline``); a state with no rollouts yet
    gives empty panels.

    Args:
        state_json: the state file path, or its dict (``CurriculumScheduler.state_dict()``).
        out: where to write; the suffix picks the format, a PNG is
            ``CURRICULUM_FIGSIZE * dpi`` pixels.
        max_tasks: draw this many most-tried tasks individually (the mean over all is
            always drawn).
        dpi: resolution.

    Raises:
        ValueError: the input is not a curriculum state (e.g. eval results), or the
            suffix is not a format.
    """
    return _save(curriculum_figure(state_json, max_tasks=max_tasks), out, dpi)
