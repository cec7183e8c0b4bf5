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

from forgegym.play.plots.common import (
    CURRICULUM_FIGSIZE,
    EPISODE_FIGSIZE,
    SCORES_FIGSIZE,
    output_formats,
)
from forgegym.play.plots.curriculum import curriculum_figure, plot_curriculum
from forgegym.play.plots.episode import episode_figure, plot_episode
from forgegym.play.plots.scores import plot_scores, scores_figure
from forgegym.play.plots.telemetry import plot_telemetry, telemetry_figure
from forgegym.play.results import (
    EPISODES_FORMAT,
    EVAL_FORMAT,
    Episode,
    EvalEpisode,
    EvalResults,
    EvalStep,
    Results,
    Step,
)

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
