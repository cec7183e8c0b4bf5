"""The evaluation protocol's statistics: runs, pass@k, difficulty weights, intervals.

A *task* is one ``(env_id, task_id)``; its *runs* are every episode a policy played on
it (``forgegym eval --runs R`` plays each task R times). Per task, from its runs:

* ``score``: the mean score over runs (mean-of-runs);
* ``best``: the best score over runs (best-of-runs, the seed's leaderboard rule);
* ``success``: the fraction of runs solved (the unbiased pass@1);
* ``pass@k``: the unbiased estimator ``1 - C(n-c,k)/C(n,k)`` over the task's ``n``
  runs with ``c`` successes (:func:`forgegym.curricula.pass_at_k`), for ``k <= n``;
  ``pass@n`` is best-of-runs success.

A metric of a set of tasks is the mean of its per-task values. Cells are (family,
difficulty level); a family's value is the *difficulty-weighted* mean of its levels'
cells, and the aggregate is the mean of the families' values (each family counts the
same, whatever its number of tasks). The weights are Easy/Medium/Hard = 20/35/45 by
default (the seed's); :func:`level_weights` maps them onto a family's own levels.

Intervals are Student-t intervals of the weighted mean over tasks (tasks, not runs:
the runs of a task are not independent draws of the benchmark), valid for the small
evaluations this protocol meets (6 to 30 tasks, single-task strata):

* a (family, level) stratum of two or more tasks contributes ``w² s² / n`` to the
  variance (its weight, sample variance and size);
* single-task strata have no variance of their own: they borrow the pooled
  within-stratum variance of the other strata (``w² s²_pooled`` each); when every
  stratum holds one task, they are *collapsed* into one group, which contributes
  ``m/(m-1) Σ w² (y - ȳ)²`` around the group's weighted mean (Hansen, Hurwitz and
  Madow's collapsed strata; conservative when the strata's means differ). One task
  alone has no spread to estimate, and its interval is the metric's whole range;
* the half-width is ``t(df) · se`` with Welch–Satterthwaite degrees of freedom, clipped
  to the metric's range;
* when every task agrees (no spread at all: a reference that solves all six), the
  interval is the exact bound for a [0, 1] quantity: a mean below ``1 - (α/2)^(1/n)``
  from the observed end gives n equal values less than α/2 of the time (Markov:
  ``P(Y = 0) <= 1 - E[Y]``), so 6 tasks solved of 6 read [0.541, 1], not [1, 1].

A percentile bootstrap inside strata claims certainty where a stratum holds one task
(its replicates never move) and undercovers below about 30 tasks; the simulated
coverage of both choices is in ``docs/evaluation.md`` (and
``tests/play/test_aggregate.py`` keeps it between 90% and 98%). :func:`bootstrap_interval`
stays the plain percentile bootstrap of a sample mean.

:func:`paired_difference` uses the same interval on the per-task differences of the
tasks two policies share (so what both find hard cancels out), with the paired t-test's
two-sided p-value (a sign test when every difference is the same).

*Runs.* ``best`` and ``best_success`` grow with the number of runs; ``best@k`` is the
unbiased best-of-k (the mean over k-subsets of a task's runs of their best score, the
continuous pass@k), so tasks played a different number of times are compared at a
common k (``forgegym leaderboard`` does it by itself).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from forgegym.curricula.estimator import pass_at_k

__all__ = [
    "BASE_METRICS",
    "DEFAULT_WEIGHTS",
    "Cell",
    "Interval",
    "PairedDifference",
    "PolicySummary",
    "TaskOutcome",
    "best_of_k",
    "bootstrap_interval",
    "t_interval",
    "t_quantile",
    "t_sf",
    "check_metric",
    "level_weights",
    "metric_names",
    "paired_difference",
    "summarise_policy",
    "summarise_results",
    "task_outcomes",
]

#: Easy / Medium / Hard weights of the seed's leaderboard (normalised when used).
DEFAULT_WEIGHTS: tuple[float, ...] = (0.20, 0.35, 0.45)
#: Metrics every summary has; ``pass@k`` for ``2 <= k <= min runs`` come on top.
BASE_METRICS: tuple[str, ...] = ("score", "best", "success", "best_success")
#: Bootstrap replicates (the percentile's Monte Carlo error is ~0.3% of coverage).
DEFAULT_RESAMPLES = 2000
CONFIDENCE = 0.95


class Interval(BaseModel):
    """A point estimate and its bootstrap interval."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class TaskOutcome:
    """One task's runs by one policy."""

    env_id: str
    task_id: str
    family: str
    difficulty: int | None
    scores: tuple[float, ...]
    successes: tuple[bool, ...]

    @property
    def key(self) -> tuple[str, str]:
        return (self.env_id, self.task_id)

    @property
    def runs(self) -> int:
        return len(self.scores)

    def value(self, metric: str) -> float:
        """This task's value of ``metric`` (see the module docstring)."""
        n, c = len(self.successes), sum(self.successes)
        if metric == "score":
            return float(sum(self.scores) / n)
        if metric == "best":
            return float(max(self.scores))
        if metric == "success":
            return c / n
        if metric == "best_success":
            return float(c > 0)
        if metric.startswith("pass@"):
            k = int(metric[5:])
            return pass_at_k(n, c, k)
        if metric.startswith("best@"):
            return best_of_k(self.scores, int(metric[5:]))
        raise ValueError(
            f"metric: unknown metric {metric!r}; known: {list(BASE_METRICS)}, pass@k, best@k"
        )


def best_of_k(scores: Sequence[float], k: int) -> float:
    """The unbiased estimate, from ``n >= k`` runs, of the expected best score of k runs:
    the mean over every k-subset of the runs of its maximum (``best@n`` is the best run;
    ``best@1`` the mean)."""
    n = len(scores)
    if not 1 <= k <= n:
        raise ValueError(f"k: best@{k} needs 1 <= k <= runs ({n})")
    ordered = sorted(scores)
    total = math.comb(n, k)
    # The i-th smallest (1-based) is the maximum of C(i-1, k-1) of the k-subsets.
    return float(sum(ordered[i - 1] * math.comb(i - 1, k - 1) for i in range(k, n + 1)) / total)


def metric_names(min_runs: int) -> list[str]:
    """The metrics a summary over tasks of at least ``min_runs`` runs reports."""
    return [*BASE_METRICS, *(f"pass@{k}" for k in range(2, min_runs + 1))]


def check_metric(metric: str, min_runs: int) -> None:
    """``ValueError`` unless ``metric`` is known and computable with ``min_runs`` runs."""
    if metric in BASE_METRICS:
        return
    if metric.startswith(("pass@", "best@")) and metric[5:].isdigit():
        k = int(metric[5:])
        if 1 <= k <= min_runs:
            return
        raise ValueError(f"metric: {metric} needs >= {k} runs per task; the fewest is {min_runs}")
    raise ValueError(
        f"metric: unknown metric {metric!r}; known: {', '.join(BASE_METRICS)}, pass@k, best@k"
    )


def level_weights(
    levels: Iterable[int], weights: Sequence[float] = DEFAULT_WEIGHTS
) -> dict[int, float]:
    """The Easy/Medium/Hard ``weights`` spread over a family's difficulty ``levels``.

    The weights are placed at evenly spaced positions from the easiest level (0) to
    the hardest (1), and each level gets the piecewise-linear interpolation at its own
    position: three levels get the weights as they are, five levels get
    20, 27.5, 35, 40, 45, one level gets everything. Normalised to sum to 1.
    """
    ordered = sorted(set(levels))
    if not ordered:
        raise ValueError("levels: expected at least one difficulty level")
    if not weights or any(not math.isfinite(w) or w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError(f"weights: expected non-negative numbers, not all 0, got {weights!r}")
    if len(ordered) == 1:
        return {ordered[0]: 1.0}
    anchors = np.linspace(0.0, 1.0, len(weights))
    positions = np.linspace(0.0, 1.0, len(ordered))
    raw = np.interp(positions, anchors, np.asarray(weights, dtype=float))
    if raw.sum() <= 0:
        raise ValueError(f"weights: {weights!r} give every level of {ordered} weight 0")
    return {level: float(w / raw.sum()) for level, w in zip(ordered, raw, strict=True)}


# ------------------------------------------------------------------ bootstrap
def _stratified(
    strata: Sequence[tuple[float, np.ndarray]], rng: np.random.Generator, resamples: int
) -> tuple[float, np.ndarray]:
    """The weighted mean of per-stratum means and ``resamples`` replicates of it.

    ``strata`` is ``(weight, values)`` pairs with weights summing to 1; every replicate
    resamples each stratum's values with replacement at its own size.
    """
    point = 0.0
    replicates = np.zeros(resamples)
    for weight, values in strata:
        point += weight * float(values.mean())
        if len(values) > 1 and np.ptp(values) > 0:
            picks = rng.integers(0, len(values), size=(resamples, len(values)))
            replicates += weight * values[picks].mean(axis=1)
        else:  # no spread to resample (and the draws would be wasted)
            replicates += weight * float(values.mean())
    return point, replicates


def _interval(point: float, replicates: np.ndarray, confidence: float) -> Interval:
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    # Float noise of a zero-spread sum can put the point a hair outside its interval.
    return Interval(value=point, low=min(float(low), point), high=max(float(high), point))


def bootstrap_interval(
    values: Sequence[float],
    *,
    rng: np.random.Generator | int | None = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Interval:
    """The mean of ``values`` with its percentile-bootstrap interval."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or len(array) == 0:
        raise ValueError("values: expected a non-empty sequence of numbers")
    generator = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    point, replicates = _stratified([(1.0, array)], generator, resamples)
    return _interval(point, replicates, confidence)


# ------------------------------------------------------------------ t intervals
def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 400):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return result


def _beta_regularized(a: float, b: float, x: float) -> float:
    """``I_x(a, b)``, the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """``P(T > t)`` for Student's t with ``df`` (possibly fractional) degrees of freedom."""
    if df <= 0:
        raise ValueError(f"df: expected > 0, got {df}")
    tail = 0.5 * _beta_regularized(df / 2.0, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def _t_density(t: float, df: float) -> float:
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (Newton steps
    kept inside a bisection bracket)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p: expected 0 < p < 1, got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    target = 1.0 - p  # the upper tail
    low, high = 0.0, 1.0
    while t_sf(high, df) > target:
        low, high = high, high * 2.0
    x = (low + high) / 2.0
    for _ in range(100):
        error = t_sf(x, df) - target  # decreasing in x
        if abs(error) < 1e-13:
            break
        if error > 0:
            low = x
        else:
            high = x
        step = x + error / _t_density(x, df)
        x = step if low < step < high else (low + high) / 2.0
    return x


@dataclass(frozen=True)
class _Spread:
    """A weighted mean over strata, its estimated variance and degrees of freedom."""

    point: float
    variance: float | None  # None: one task, no spread to estimate
    df: float
    n_effective: float  # Kish's effective number of tasks


def _spread(strata: Sequence[tuple[float, np.ndarray]]) -> _Spread:
    """The weighted mean of per-stratum means with its variance (see the module
    docstring: within-stratum variances, singletons collapsed into one group)."""
    point = sum(w * float(values.mean()) for w, values in strata)
    task_weights = [w / len(values) for w, values in strata for _ in values]
    total = sum(task_weights)
    n_effective = total * total / sum(u * u for u in task_weights) if total > 0 else 0.0
    parts: list[tuple[float, float]] = []  # (variance, degrees of freedom)
    pooled_ss, pooled_df = 0.0, 0
    singles = [(w, float(values[0])) for w, values in strata if len(values) == 1]
    for weight, values in strata:
        n = len(values)
        if n >= 2:
            variance = float(values.var(ddof=1))
            parts.append((weight * weight * variance / n, n - 1.0))
            pooled_ss += variance * (n - 1)
            pooled_df += n - 1
    if singles and pooled_df > 0:
        # Single-task strata borrow the pooled within-stratum variance of the others.
        parts.append((sum(w * w for w, _ in singles) * pooled_ss / pooled_df, float(pooled_df)))
    elif len(singles) >= 2:  # every stratum holds one task: collapse them into one group
        group = sum(w for w, _ in singles)
        centre = sum(w * y for w, y in singles) / group if group > 0 else 0.0
        m = len(singles)
        parts.append((m / (m - 1) * sum(w * w * (y - centre) ** 2 for w, y in singles), m - 1.0))
    elif singles:  # one task alone
        return _Spread(point=point, variance=None, df=0.0, n_effective=n_effective)
    variance = sum(v for v, _ in parts)
    spread = sum(v * v / df for v, df in parts if v > 0)
    df = variance * variance / spread if spread > 0 else max(1.0, n_effective - 1.0)
    return _Spread(point=point, variance=variance, df=max(df, 1.0), n_effective=n_effective)


def _t_interval(
    strata: Sequence[tuple[float, np.ndarray]],
    confidence: float,
    bounds: tuple[float, float],
) -> tuple[Interval, _Spread]:
    spread = _spread(strata)
    point = spread.point
    low_bound, high_bound = bounds
    if spread.variance is None:  # one task: nothing says how far the mean may be
        return Interval(value=point, low=low_bound, high=high_bound), spread
    alpha = 1.0 - confidence
    if spread.variance <= 1e-18:
        # Every task agrees: the exact bound for a quantity in [0, 1] (module docstring).
        half = 1.0 - (alpha / 2.0) ** (1.0 / max(spread.n_effective, 1.0))
    else:
        half = t_quantile(1.0 - alpha / 2.0, spread.df) * math.sqrt(spread.variance)
    interval = Interval(
        value=point, low=max(low_bound, point - half), high=min(high_bound, point + half)
    )
    return interval, spread


def t_interval(
    values: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> Interval:
    """The mean of ``values`` (in ``bounds``) with its Student-t interval (the exact
    bound when every value is the same; the whole range for one value)."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or len(array) == 0:
        raise ValueError("values: expected a non-empty sequence of numbers")
    return _t_interval([(1.0, array)], confidence, bounds)[0]


# ------------------------------------------------------------------ outcomes
def task_outcomes(episodes: Iterable[Any]) -> dict[str, list[TaskOutcome]]:
    """Episodes (:class:`~forgegym.play.results.Episode`) grouped by policy, then by task.

    Every episode of a policy on the same ``(env_id, task_id)`` is one run of that task,
    in the order given. Returns ``{policy: [TaskOutcome, ...]}`` in first-seen order.
    """
    grouped: dict[str, dict[tuple[str, str], list[Any]]] = {}
    for episode in episodes:
        grouped.setdefault(episode.policy, {}).setdefault(
            (episode.env_id, episode.task_id), []
        ).append(episode)
    out: dict[str, list[TaskOutcome]] = {}
    for policy, tasks in grouped.items():
        out[policy] = []
        for (env_id, task_id), runs in tasks.items():
            first = runs[0]
            out[policy].append(
                TaskOutcome(
                    env_id=env_id,
                    task_id=task_id,
                    family=first.family or env_id,
                    difficulty=first.difficulty,
                    scores=tuple(float(e.score) for e in runs),
                    successes=tuple(bool(e.success) for e in runs),
                )
            )
    return out


@dataclass
class _Strata:
    """Tasks by family and level, with each stratum's weight in the aggregate."""

    cells: dict[tuple[str, int | None], list[TaskOutcome]] = field(default_factory=dict)

    @classmethod
    def of(cls, tasks: Iterable[TaskOutcome]) -> _Strata:
        strata = cls()
        for task in tasks:
            strata.cells.setdefault((task.family, task.difficulty), []).append(task)
        strata.cells = dict(sorted(strata.cells.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)))
        return strata

    @property
    def families(self) -> list[str]:
        return list(dict.fromkeys(family for family, _ in self.cells))

    def weights(
        self, family: str | None, level_weights_of: Mapping[str, Mapping[int | None, float]]
    ) -> dict[tuple[str, int | None], float]:
        """Stratum weights of one family's value (``family``) or of the aggregate
        (``None``): level weights renormalised over the levels present, families equal."""
        chosen = [f for f in self.families if family is None or f == family]
        out: dict[tuple[str, int | None], float] = {}
        for name in chosen:
            levels = [lv for f, lv in self.cells if f == name]
            raw = {lv: level_weights_of[name].get(lv, 0.0) for lv in levels}
            total = sum(raw.values())
            for lv in levels:
                share = raw[lv] / total if total > 0 else 1.0 / len(levels)
                out[(name, lv)] = share / len(chosen)
        return out


def _family_level_weights(
    strata: _Strata,
    weights: Sequence[float],
    levels_of: Mapping[str, Sequence[int]] | None,
) -> dict[str, dict[int | None, float]]:
    """Per family, the weight of each level: spread over the family's declared levels
    (``levels_of``, e.g. the bank's ``difficulty_levels``) when known, else over the
    levels seen. Tasks without a level (``None``) share one stratum of equal weight."""
    out: dict[str, dict[int | None, float]] = {}
    for family in strata.families:
        seen = [lv for f, lv in strata.cells if f == family]
        known = [lv for lv in seen if lv is not None]
        declared = list((levels_of or {}).get(family) or known)
        spread: dict[int | None, float] = {}
        if declared:
            for level, weight in level_weights(declared, weights).items():
                spread[level] = weight
        for lv in known:
            if lv not in spread:
                raise ValueError(
                    f"levels_of: family {family!r} has tasks of level {lv}, not among its "
                    f"levels {sorted(x for x in spread if x is not None)}"
                )
        if None in seen:
            spread[None] = 1.0 / max(1, len(spread)) if spread else 1.0
        out[family] = spread
    return out


class Cell(BaseModel):
    """One (family, level) cell, one family (``difficulty`` ``None`` and ``level`` "all",
    difficulty-weighted) or the aggregate (``family`` "all")."""

    family: str
    difficulty: int | None = None
    level: str = Field(description="the difficulty level, 'all' (weighted) or 'none'")
    tasks: int
    runs: int = Field(description="episodes: the sum of every task's runs")
    metrics: dict[str, Interval]


class PolicySummary(BaseModel):
    """What the results file and the summary table report for one policy (or model)."""

    policy: str
    tasks: int
    min_runs: int
    max_runs: int
    weights: list[float]
    level_weights: dict[str, dict[str, float]] = Field(
        description="per family, each level's weight in the family's value"
    )
    cells: list[Cell] = Field(description="per (family, level), then per family")
    aggregate: Cell


def summarise_policy(
    policy: str,
    tasks: Sequence[TaskOutcome],
    *,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    levels_of: Mapping[str, Sequence[int]] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
    metrics: Sequence[str] | None = None,
) -> PolicySummary:
    """Every metric (or only ``metrics``) with its interval per (family, level), per
    family and overall."""
    if not tasks:
        raise ValueError(f"tasks: policy {policy!r} has no episodes to summarise")
    strata = _Strata.of(tasks)
    per_level = _family_level_weights(strata, weights, levels_of)
    min_runs = min(t.runs for t in tasks)
    if metrics is None:
        metrics = metric_names(min_runs)
    for metric in metrics:
        check_metric(metric, min_runs)

    def cell(
        family: str, difficulty: int | None, level: str, stratum_weights: Mapping[Any, float]
    ) -> Cell:
        chosen = [strata.cells[key] for key in stratum_weights]
        values: dict[str, Interval] = {}
        for metric in metrics:
            parts = [
                (w, np.array([t.value(metric) for t in strata.cells[key]]))
                for key, w in stratum_weights.items()
            ]
            values[metric] = _t_interval(parts, confidence, (0.0, 1.0))[0]
        return Cell(
            family=family,
            difficulty=difficulty,
            level=level,
            tasks=sum(len(c) for c in chosen),
            runs=sum(t.runs for c in chosen for t in c),
            metrics=values,
        )

    cells = [
        cell(f, lv, "none" if lv is None else str(lv), {(f, lv): 1.0}) for f, lv in strata.cells
    ]
    cells += [cell(f, None, "all", strata.weights(f, per_level)) for f in strata.families]
    aggregate = cell("all", None, "all", strata.weights(None, per_level))
    return PolicySummary(
        policy=policy,
        tasks=len(tasks),
        min_runs=min_runs,
        max_runs=max(t.runs for t in tasks),
        weights=[float(w) for w in weights],
        level_weights={
            f: {("none" if lv is None else str(lv)): w for lv, w in spread.items()}
            for f, spread in per_level.items()
        },
        cells=cells,
        aggregate=aggregate,
    )


def summarise_results(
    episodes: Iterable[Any],
    *,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    levels_of: Mapping[str, Sequence[int]] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, PolicySummary]:
    """:func:`summarise_policy` for every policy of ``episodes``."""
    return {
        policy: summarise_policy(
            policy, tasks, weights=weights, levels_of=levels_of, resamples=resamples, seed=seed
        )
        for policy, tasks in task_outcomes(episodes).items()
    }


class PairedDifference(BaseModel):
    """``a - b`` on the tasks both played, with its paired bootstrap interval."""

    a: str
    b: str
    metric: str
    family: str = Field(description="a family, or 'all' for the weighted aggregate")
    shared_tasks: int
    difference: Interval
    p_value: float = Field(
        description="two-sided p-value of 'no difference' (paired t-test on the per-task "
        "differences; a sign test when they are all the same)"
    )


def paired_difference(
    a: Sequence[TaskOutcome],
    b: Sequence[TaskOutcome],
    *,
    names: tuple[str, str] = ("a", "b"),
    metric: str = "best",
    family: str | None = None,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    levels_of: Mapping[str, Sequence[int]] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> PairedDifference:
    """The difference of two policies' weighted ``metric`` on the tasks both played.

    Each shared task contributes ``value_a - value_b``; the tasks are resampled (within
    strata) together, so what both policies find hard cancels out.

    Raises:
        ValueError: no shared task (in ``family``), or an unknown metric.
    """
    by_key = {t.key: t for t in b if family is None or t.family == family}
    shared = [(t, by_key[t.key]) for t in a if t.key in by_key]
    if not shared:
        where = f" of family {family!r}" if family else ""
        raise ValueError(f"a, b: {names[0]} and {names[1]} share no task{where}")
    min_runs = min(min(x.runs, y.runs) for x, y in shared)
    check_metric(metric, min_runs)
    strata = _Strata.of(x for x, _ in shared)
    per_level = _family_level_weights(strata, weights, levels_of)
    difference = {x.key: x.value(metric) - y.value(metric) for x, y in shared}
    parts = [
        (w, np.array([difference[t.key] for t in strata.cells[key]]))
        for key, w in strata.weights(None, per_level).items()
    ]
    interval, spread = _t_interval(parts, confidence, (-1.0, 1.0))
    if spread.variance is None or spread.point == 0.0:
        p_value = 1.0
    elif spread.variance <= 1e-18:  # every difference the same: the sign test
        p_value = min(1.0, 2.0 * 0.5 ** len(shared))
    else:
        statistic = abs(spread.point) / math.sqrt(spread.variance)
        p_value = min(1.0, 2.0 * t_sf(statistic, spread.df))
    return PairedDifference(
        a=names[0],
        b=names[1],
        metric=metric,
        family=family or "all",
        shared_tasks=len(shared),
        difference=interval,
        p_value=p_value,
    )
