"""Score distributions per family (:func:`plot_scores`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.play.plots.common import (
    SCORES_FIGSIZE,
    _agg,
    _as_results,
    _empty,
    _save,
    _shorten,
    _wrap,
)
from forgegym.play.results import Episode

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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
