"""Plots of evaluation results and curriculum state (matplotlib, Agg backend).

The episode schema lives in :mod:`forgegym.play.results` (re-exported here): ``forgegym
eval`` and :func:`forgegym.play.rollouts.collect_rollouts` both produce
:class:`~forgegym.play.results.Episode` records, saved as a :class:`Results` file
(``Results.save`` / ``save_episodes``). The plots take a path, a dict, a
:class:`Results` or a list of episodes, and read the older formats too (``forgegym.eval/1``
files, trajectory lists), migrating them.

Plots
-----
* :func:`plot_episode` — the evaluation dashboard, one colour per (env, policy) group:
  cumulative reward within each episode, reward per step, score per episode with each
  group's pass rate, and a heatmap of every reward-breakdown term (penalties and fired
  gates negative, on a diverging scale). Nothing is accumulated across episodes of
  different policies or environments.
* :func:`plot_curriculum` — pass@k per task over time, tier sizes over time and the
  difficulty of the tasks served, from a :mod:`forgegym.curricula` state file.
* :func:`plot_scores` — score distributions per family (and policy, when there are
  several).

Each has a ``*_figure`` twin that returns the matplotlib figure instead of writing it.
Inputs are checked: a file of another kind (a curriculum state given to
:func:`plot_episode`, ...) raises ``ValueError`` saying what it is. The output's suffix
picks the format (``.png``, ``.pdf``, ``.svg``, ... see :func:`output_formats`); a
figure has a fixed size (``figsize * dpi`` pixels for raster formats; no tight bbox,
so sizes are predictable). matplotlib is imported lazily, so the schema models work
without it (it is in the ``plot`` extra).
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.play.results import (
    EPISODES_FORMAT,
    EVAL_FORMAT,
    Episode,
    EvalEpisode,
    EvalResults,
    EvalStep,
    Results,
    Step,
    describe,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


__all__ = [
    "CURRICULUM_FIGSIZE",
    "EPISODES_FORMAT",
    "EPISODE_FIGSIZE",
    "EVAL_FORMAT",
    "SCORES_FIGSIZE",
    "Episode",
    "EvalEpisode",
    "EvalResults",
    "EvalStep",
    "Results",
    "Step",
    "curriculum_figure",
    "episode_figure",
    "output_formats",
    "plot_curriculum",
    "plot_episode",
    "plot_scores",
    "scores_figure",
    "plot_telemetry",
    "telemetry_figure",
]

#: Figure sizes in inches; at the default ``dpi=100`` the PNGs are 1200x900, 1200x900
#: and 1000x500 pixels.
EPISODE_FIGSIZE: tuple[float, float] = (12.0, 9.0)
CURRICULUM_FIGSIZE: tuple[float, float] = (12.0, 9.0)
SCORES_FIGSIZE: tuple[float, float] = (10.0, 5.0)

#: The ``format`` of a curriculum state file (:mod:`forgegym.curricula`).
CURRICULUM_FORMAT = "forgegym.curriculum/1"


# ---------------------------------------------------------------- input checks
def _read_json(source: Any) -> Any:
    if isinstance(source, (str, Path)):
        return json.loads(Path(source).read_text(encoding="utf-8"))
    return source


def _what_it_is(data: Any) -> str:
    """What a wrong input looks like, and which plot reads it."""
    return describe(data)


def _as_results(source: Any) -> Results:
    """A :class:`Results` from a path, dict, model or list of episodes (old formats
    migrated, see :mod:`forgegym.play.results`).

    Raises ``ValueError`` for anything else (a curriculum state, a learning report, a
    results file with missing or ill-typed fields), saying what the input is.
    """
    return Results.from_data(_read_json(source))


def _as_state(source: Any) -> Mapping[str, Any]:
    state = _read_json(source)
    if not isinstance(state, Mapping) or state.get("format") != CURRICULUM_FORMAT:
        raise ValueError(
            f"state: expected a curriculum state (format {CURRICULUM_FORMAT!r}, written by "
            f"CurriculumScheduler.save), got {_what_it_is(state)}"
        )
    return state


# ---------------------------------------------------------------- output
def output_formats() -> dict[str, str]:
    """The file suffixes the plots can write (``{"png": "Portable Network Graphics",
    ...}``): what matplotlib's non-interactive canvas supports."""
    from matplotlib.backend_bases import FigureCanvasBase

    return dict(FigureCanvasBase.get_supported_filetypes())


def _agg() -> Any:
    import matplotlib

    # Why: a headless default; notebooks that chose a backend keep it (inline is Agg-based).
    if "inline" not in matplotlib.get_backend().lower():
        matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Figure, out: str | Path, dpi: int) -> Path:
    """Write ``fig`` in the format the suffix of ``out`` names, then close it."""
    import matplotlib.pyplot as plt

    path = Path(out)
    fmt = path.suffix.lower().lstrip(".")
    formats = output_formats()
    if fmt not in formats:
        plt.close(fig)
        raise ValueError(
            f"out: the suffix names the format; {path.name!r} has "
            f"{'suffix ' + repr(path.suffix) if path.suffix else 'none'}, use one of "
            + ", ".join(f".{f}" for f in sorted(formats))
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(path, dpi=dpi, format=fmt)
    finally:
        plt.close(fig)
    return path


def _wrap(text: str, width: int, lines: int = 2) -> str:
    """``text`` wrapped to ``width`` characters, at most ``lines`` lines (ends in "…")."""
    wrapped = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 1].rstrip() + "…"
    return "\n".join(wrapped)


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _integer_axis(axis: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    # min_n_ticks=1: integers even when the range holds only one (episodes of one step).
    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


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


def curriculum_figure(state_json: Any, *, max_tasks: int = 12) -> Figure:
    """The figure :func:`plot_curriculum` writes (see there)."""
    state = _as_state(state_json)
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

    fig, (ax_task, ax_tier, ax_diff) = plt.subplots(
        3, 1, figsize=CURRICULUM_FIGSIZE, layout="constrained"
    )
    fig.suptitle(
        f"Curriculum: {len(tasks)} tasks in the pool, {state.get('episode', '?')} rollouts",
        fontsize=11,
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
    # One rollout axis for the three panels: each panel's data starts at a different
    # rollout (the tier timeline at 0), so their own limits put rollout 1 at three places.
    timed = [ax for ax in (ax_task, ax_tier, ax_diff) if ax.get_xlabel() == "rollouts"]
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
    return fig


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


# ---------------------------------------------------------------- scores
def scores_figure(trajectories: Any) -> Figure:
    """The figure :func:`plot_scores` writes (see there)."""
    results = _as_results(trajectories)
    policies = sorted({e.policy for e in results.episodes if e.policy})
    several = len(policies) > 1
    groups: dict[str, list[Episode]] = {}
    for ep in results.episodes:  # never pooled across policies
        key = f"{ep.group}\n{_shorten(ep.policy, 20)}" if several else ep.group
        groups.setdefault(key, []).append(ep)
    plt = _agg()
    import numpy as np

    fig, ax = plt.subplots(figsize=SCORES_FIGSIZE, layout="constrained")
    if groups:
        names = sorted(groups)
        data = [[e.score for e in groups[n]] for n in names]
        ax.boxplot(data, widths=0.5, showfliers=False)
        ax.set_xticks(range(1, len(names) + 1), names, fontsize=8 if several else 10)
        rng = np.random.default_rng(0)  # fixed jitter: the same image for the same data
        cmap = plt.get_cmap("tab10")
        for j, name in enumerate(names, start=1):
            scores = np.array(data[j - 1])
            jitter = rng.uniform(-0.15, 0.15, size=len(scores))
            success = np.array([e.success for e in groups[name]])
            ax.scatter(j + jitter, scores, s=18, color=cmap(j % 10), alpha=0.7, edgecolors="none")
            note = f"n={len(scores)}\npass {success.mean():.0%}\nmean {scores.mean():.2f}"
            ax.annotate(note, (j, 1.04), ha="center", va="bottom", fontsize=7)
        ax.set_ylim(-0.05, 1.25)
        ax.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    else:
        _empty(ax, "no episodes")
    title = "Score per family and policy" if several else "Score per family"
    if policies and not several:
        title += f" ({policies[0]})"
    ax.set(
        title=_wrap(title, 90),
        xlabel="family · policy" if several else "family",
        ylabel="score",
    )
    return fig


def plot_scores(trajectories: Any, out: str | Path, *, dpi: int = 100) -> Path:
    """Score distributions per family (box plot plus every episode as a dot).

    Args:
        trajectories: :class:`~forgegym.play.results.Episode` objects (a list), a
            :class:`Results`, or a path to either's JSON.
        out: where to write; the suffix picks the format, a PNG is
            ``SCORES_FIGSIZE * dpi`` pixels.
        dpi: resolution.
    """
    return _save(scores_figure(trajectories), out, dpi)


# ------------------------------------------------------------------------ telemetry
def telemetry_figure(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """The ``forgegym/*`` telemetry over training steps (the rows
    :func:`forgegym.integrations.trl.telemetry_callback` writes: ``{"step": ...,
    "forgegym/<key>": rate}``): one panel for the cheat rate and invalid rewards, one
    for gate and hack-kind rates, and the unparseable share, each key a line."""
    if not rows:
        raise ValueError("telemetry: no rows (was the callback passed to the trainer?)")
    if not all(isinstance(r, Mapping) and "step" in r for r in rows):
        raise ValueError("telemetry: every row needs a 'step' (JSON lines of the callback)")
    plt = _agg()
    keys = sorted({k for r in rows for k in r if str(k).startswith("forgegym/")})
    panels = {
        "cheating and validity": [
            k for k in keys if k in ("forgegym/cheat_rate", "forgegym/reward_invalid")
        ],
        "gates and hacks flagged": [
            k for k in keys if k.startswith(("forgegym/gate/", "forgegym/hack/"))
        ],
        "unparseable actions": [k for k in keys if k == "forgegym/unparseable"],
    }
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 8), sharex=True, squeeze=False)
    for ax, (title, names) in zip(axes[:, 0], panels.items(), strict=True):
        for key in names:
            # A gate or hack kind no completion of a batch hit is not logged that step: 0.
            absent = 0.0 if key.startswith(("forgegym/gate/", "forgegym/hack/")) else None
            points = [
                (float(r["step"]), float(r.get(key, absent)))  # type: ignore[arg-type]
                for r in rows
                if key in r or absent is not None
            ]
            ax.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                marker="o",
                markersize=3,
                label=key.removeprefix("forgegym/"),
            )
        ax.set_title(title)
        ax.set_ylabel("share of batch")
        ax.set_ylim(-0.02, 1.02)
        if names:
            ax.legend(fontsize=7, loc="upper right")
        else:
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes)
    axes[-1, 0].set_xlabel("training step")
    fig.tight_layout()
    return fig  # type: ignore[no-any-return]


def plot_telemetry(rows: Sequence[Mapping[str, Any]], out: str | Path, dpi: int = 120) -> Path:
    """Write :func:`telemetry_figure` to ``out`` (format from its suffix)."""
    return _save(telemetry_figure(rows), out, dpi)
