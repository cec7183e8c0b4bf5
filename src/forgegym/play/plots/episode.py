"""The evaluation dashboard (:func:`plot_episode`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.play.plots.common import (
    EPISODE_FIGSIZE,
    _agg,
    _as_results,
    _empty,
    _integer_axis,
    _save,
    _shorten,
    _wrap,
)
from forgegym.play.results import Episode

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# ---------------------------------------------------------------- episode dashboard
def _signed_terms(breakdown: Mapping[str, Any]) -> dict[str, float]:
    """Row label -> signed value of one breakdown: credits as given, penalties negated
    (a regression of 1.0 shows as -1.0), fired gates as -1, then total and score."""
    from forgegym.rewards.breakdown import DEFAULT_TERM_KINDS

    values: dict[str, float] = {}
    for name, term in (breakdown.get("terms") or {}).items():
        if isinstance(term, Mapping):
            value, kind = term.get("value"), term.get("kind")
        else:
            value, kind = term, None
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        kind = kind or DEFAULT_TERM_KINDS.get(str(name), "credit")
        if kind == "penalty":
            values[f"{name} (penalty)"] = -abs(float(value))
        elif kind == "shaping":
            values[f"{name} (shaping)"] = float(value)
        else:
            values[str(name)] = float(value)
    for gate in breakdown.get("gates") or []:
        values[f"gate: {gate}"] = -1.0
    for key in ("total", "score"):
        value = breakdown.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[key] = float(value)
    return values


def _groups(episodes: Sequence[Episode]) -> dict[tuple[str, str], list[Episode]]:
    """Episodes by (env id, policy), in first-seen order."""
    groups: dict[tuple[str, str], list[Episode]] = {}
    for episode in episodes:
        groups.setdefault((episode.env_id, episode.policy), []).append(episode)
    return groups


def _group_label(key: tuple[str, str], sep: str = " · ", width: int = 24) -> str:
    """``"Bugfix-v0 · reference"`` (the namespace dropped), each part at most ``width``
    characters; ``sep="\\n"`` for tick labels."""
    env_id, policy = key
    env = _shorten(env_id.split("/", 1)[-1] or "?", width)
    return f"{env}{sep}{_shorten(policy or '?', width)}"


def episode_figure(results_json: Any, *, episode: int | None = None) -> Figure:
    """The figure :func:`plot_episode` writes (see there)."""
    results = _as_results(results_json)
    episodes = results.episodes
    if not episodes:
        raise ValueError("results: no episodes to plot")
    if episode is not None:
        if not 0 <= episode < len(episodes):
            raise ValueError(f"episode must be in [0, {len(episodes)}), got {episode}")
        episodes = [episodes[episode]]
    plt = _agg()
    import numpy as np

    groups = _groups(episodes)
    keys = list(groups)
    cmap = plt.get_cmap("tab10")
    colour = {key: cmap(j % 10) for j, key in enumerate(keys)}
    labels = {key: _group_label(key, width=24 if len(keys) <= 4 else 16) for key in keys}

    fig, axes = plt.subplots(2, 2, figsize=EPISODE_FIGSIZE, layout="constrained")
    ax_cum, ax_step, ax_score, ax_heat = axes.flat
    what = (
        f"episode {episode} ({episodes[0].task_id})"
        if episode is not None
        else f"{len(episodes)} episodes"
    )
    names = "; ".join(labels[k] for k in keys)
    fig.suptitle(_wrap(f"forgegym evaluation, {what}: {names}", 110), fontsize=11)

    # Cumulative reward restarts at every episode; one colour per (env, policy).
    max_len = max(len(e.steps) for e in episodes)
    for key in keys:
        for k, ep in enumerate(groups[key]):
            if not ep.steps:
                continue
            xs = np.arange(1, len(ep.steps) + 1)
            ax_cum.plot(
                xs,
                np.cumsum([s.reward for s in ep.steps]),
                color=colour[key],
                marker="o",
                markersize=3,
                linewidth=1,
                alpha=0.7,
                label=labels[key] if k == 0 else None,
            )
    ax_cum.axhline(0.0, color="0.3", linewidth=0.8)
    ax_cum.set(
        title="Cumulative reward within each episode",
        xlabel="step of the episode",
        ylabel="sum of rewards so far",
    )

    # Step rewards: every episode's step t as a dot, the group's mean at t as a line.
    offsets = np.linspace(-0.15, 0.15, len(keys)) if len(keys) > 1 else [0.0]
    for key, offset in zip(keys, offsets, strict=True):
        by_step: dict[int, list[float]] = {}
        for ep in groups[key]:
            for t, s in enumerate(ep.steps, start=1):
                by_step.setdefault(t, []).append(s.reward)
        if not by_step:
            continue
        ts = sorted(by_step)
        for t in ts:
            ax_step.scatter(
                [t + offset] * len(by_step[t]), by_step[t], color=colour[key], s=12, alpha=0.5
            )
        ax_step.plot(
            [t + offset for t in ts],
            [float(np.mean(by_step[t])) for t in ts],
            color=colour[key],
            linewidth=1.5,
            label=labels[key],
        )
    ax_step.axhline(0.0, color="0.3", linewidth=0.8)
    ax_step.set(
        title="Reward per step (dots: episodes, line: mean)",
        xlabel="step of the episode",
        ylabel="step reward",
    )
    for ax in (ax_cum, ax_step):
        _integer_axis(ax.xaxis)
        ax.set_xlim(0.5, max_len + 0.5)
    if len(keys) > 1:
        ax_cum.legend(fontsize=8, loc="best")

    # Scores per group (a row each, names on the left where they have room), each
    # episode a dot; the pass count is written per group, never pooled across groups.
    rng = np.random.default_rng(0)  # fixed jitter: the same image for the same data
    for j, key in enumerate(keys):
        scores = np.array([e.score for e in groups[key]])
        passed = sum(e.success for e in groups[key])
        jitter = rng.uniform(-0.15, 0.15, size=len(scores)) if len(scores) > 1 else [0.0]
        ax_score.barh(j, float(scores.mean()), height=0.6, color=colour[key], alpha=0.35)
        ax_score.scatter(scores, j + np.asarray(jitter), color=colour[key], s=18, zorder=3)
        ax_score.annotate(f"pass {passed}/{len(scores)}", (1.03, j), va="center", fontsize=8)
    ax_score.set_yticks(range(len(keys)), [_group_label(k, "\n", 22) for k in keys], fontsize=8)
    ax_score.set_ylim(len(keys) - 0.5, -0.5)  # first group on top
    ax_score.set_xlim(-0.02, 1.25)
    ax_score.set_xticks([0.0, 0.25, 0.5, 0.75, 1.0])
    ax_score.set(title="Score per episode (bar: mean) and passes, per env · policy", xlabel="score")

    first = episode if episode is not None else 0
    index = {id(ep): first + k for k, ep in enumerate(episodes)}
    _term_heatmap(fig, ax_heat, groups, labels, index, per_episode=len(keys) == 1)
    return fig


def _term_heatmap(
    fig: Figure,
    ax: Axes,
    groups: Mapping[tuple[str, str], Sequence[Episode]],
    labels: Mapping[tuple[str, str], str],
    index: Mapping[int, int],
    *,
    per_episode: bool,
) -> None:
    """Signed breakdown terms (columns) per graded step of one group, or per group (rows)."""
    import matplotlib
    import numpy as np

    rows: list[tuple[str, list[dict[str, float]]]] = []
    for key, eps in groups.items():
        graded = [
            (
                f"ep {index[id(e)]}"
                + (f" step {t}" if sum(bool(x.reward_breakdown) for x in e.steps) > 1 else ""),
                _signed_terms(s.reward_breakdown),
            )
            for e in eps
            for t, s in enumerate(e.steps, start=1)
            if s.reward_breakdown
        ]
        if per_episode:
            rows.extend((label, [values]) for label, values in graded)
        elif graded:
            rows.append((_group_label(key, "\n", 22), [values for _, values in graded]))
    names: list[str] = []
    for _, records in rows:
        for values in records:
            names.extend(n for n in values if n not in names)
    order = {"total": 2, "score": 3}
    names.sort(key=lambda n: order.get(n, 1 if n.startswith("gate: ") else 0))
    title = "Reward terms per graded step" if per_episode else "Mean reward terms per group"
    if not rows:
        _empty(ax, "no reward breakdowns")
        ax.set_title(title)
        return
    grid = np.full((len(rows), len(names)), np.nan)
    for r, (_, records) in enumerate(rows):
        for c, name in enumerate(names):
            if name.startswith("gate: "):  # a gate that did not fire is 0, not missing
                grid[r, c] = float(np.mean([v.get(name, 0.0) for v in records]))
            else:
                present = [v[name] for v in records if name in v]
                grid[r, c] = float(np.mean(present)) if present else np.nan
    cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="0.75")  # grey: not computed
    image = ax.imshow(
        np.ma.masked_invalid(grid),
        aspect="auto",
        cmap=cmap,
        vmin=-1.0,
        vmax=1.0,
        interpolation="nearest",
    )
    ax.set_xticks(range(len(names)), [_shorten(n, 24) for n in names], fontsize=8)
    ax.tick_params(axis="x", labelrotation=40)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    step = max(1, math.ceil(len(rows) / 12))
    ax.set_yticks(
        range(0, len(rows), step), [rows[r][0] for r in range(0, len(rows), step)], fontsize=8
    )
    cells: list[tuple[int, Any]] = []
    if grid.size <= 150:
        for (r, c), value in np.ndenumerate(grid):
            if not np.isnan(value):
                text = ax.text(
                    c,
                    r,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if abs(value) > 0.6 else "black",
                )
                cells.append((r, text))
    fig.colorbar(image, ax=ax, label="signed value (penalties < 0)")
    ax.set_title(
        _wrap(title + " (penalties and fired gates negative; grey: not computed)", 60),
        fontsize=10,
    )
    _declutter_heatmap(fig, ax, cells)


def _overlap(boxes: Sequence[Any]) -> bool:
    """Whether any two of these display-space bounding boxes overlap."""
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def _declutter_heatmap(fig: Figure, ax: Axes, cells: Sequence[tuple[int, Any]]) -> None:
    """Lay the figure out and undo what collides: with many terms the slanted column
    labels run into each other (then they stand upright) and the cell values into their
    neighbours (then one decimal in a smaller font, else none). Needs a draw, since only
    the laid-out figure knows how wide a cell and a label are."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    labels = [label for label in ax.get_xticklabels() if label.get_text()]
    if _overlap([label.get_window_extent(renderer) for label in labels]):
        for label in labels:
            label.set_rotation(90)
            label.set_verticalalignment("center")
        fig.draw_without_rendering()

    def crowded() -> bool:
        rows: dict[int, list[Any]] = {}
        for row, text in cells:
            # Padded: values that merely touch read as one number ("0.50-0.50").
            rows.setdefault(row, []).append(text.get_window_extent(renderer).padded(2))
        return any(_overlap(boxes) for boxes in rows.values())

    if cells and crowded():
        for _, text in cells:
            text.set_text(f"{float(text.get_text()):.1f}")
            text.set_fontsize(6)
        if crowded():
            for _, text in cells:
                text.remove()


def plot_episode(
    results_json: Any, out: str | Path, *, episode: int | None = None, dpi: int = 100
) -> Path:
    """The evaluation dashboard, one colour per (env, policy) group.

    Panels: cumulative reward within each episode; reward per step of the episode;
    score per episode with each group's pass rate; and a heatmap of the reward
    breakdown's terms (penalties and fired gates negative, a diverging scale from -1
    to 1), per graded step when there is one group, else averaged per group.

    Args:
        results_json: a :class:`Results` (or its JSON path / dict), or a list of episodes.
        out: where to write; the suffix picks the format (``.png``, ``.pdf``, ``.svg``,
            ...), a PNG is ``EPISODE_FIGSIZE * dpi`` pixels.
        episode: plot only this episode index; default every episode.
        dpi: resolution.

    Raises:
        ValueError: the input is not eval results (e.g. a curriculum state), holds no
            episodes, ``episode`` is out of range, or the suffix is not a format.
    """
    return _save(episode_figure(results_json, episode=episode), out, dpi)
