"""``CurriculumScheduler``: which task to train on next, from pass@k posteriors.

Every task in the scheduler's pool carries a ``Beta(alpha, beta)`` posterior over its
success probability ``p`` (prior ``Beta(prior_alpha, prior_beta)`` plus its own,
periodically discounted, evidence). From it the scheduler derives the expected pass@k
``E[1-(1-p)^k]``, which places a task in a *tier*: ``too_easy`` (>= ``too_easy``),
``too_hard`` (< ``too_hard``) or ``learnable``. A task with fewer than ``min_trials``
recorded rollouts stays ``learnable``; one that was never solved, or always solved, in
all of its ``retire_after`` or more rollouts is retired at once (*quick retirement*:
broken tasks and tasks far off the frontier cost one GRPO group, not many).

Sampling. Each learnable task is weighted by its *learnability* under an *effective*
posterior: its own evidence on top of a prior for its difficulty level,
``Beta(s * m_L, s * (1 - m_L))``. Both parts form a hierarchical prior learned online
from the *first* group of every task drawn (an unbiased sample of what a new task at
that level does now): ``m_L`` is the level's recency-weighted first-group success
rate, shrunk towards what the neighbouring levels predict through a logit gap between
adjacent levels that is itself estimated from the data; the strength ``s`` is the
method-of-moments fit of how much tasks of one level differ (starting from
``level_prior_strength``): with clean labels a new task is nearly as good a bet as a
known one, with noisy labels or broken tasks it is not. So a task's first draw is not a blind guess, and a level
never tried is predicted from the ones that were.

Learnability is ``"variance"`` ``E[p(1-p)]`` (the expected GRPO signal: a group gives
a gradient only when its outcomes differ) or ``"passk_slope"`` ``E[k p (1-p)^k]``
(how much pass@k moves per unit of logit skill; it peaks at ``p = 1/(k+1)``). The
weight is ``learnability ** (1 / temperature)``, times a *learning-progress* bonus
``1 + progress_weight * |fast EMA - slow EMA|`` of the task's group success rates and a
*staleness* bonus that grows with the time since it was last drawn.

The *frontier*. Untried tasks compete as one option: a new task from the frontier
level, the level where a new task is expected to be most learnable: the level prior's
prediction corrected by the signal that first groups at that level actually gave
(:meth:`CurriculumScheduler.fresh_learnability`; with noisy labels or broken tasks the
spread within a level is bimodal and the prediction alone overrates it). The frontier is
promoted as soon as the level prior allows: once the current level's mean is high
enough that the (predicted) next level is more learnable, new tasks come from there.
A fresh task is drawn (replenishing the pool from the family's bank with
``task_ids(n, seed=<growing seed>, difficulty=level)``) when that option wins the draw
or when fewer than ``min_learnable`` tasks are learnable.

Estimates go stale as the policy learns, so a small ``retired_fraction`` of draws
re-checks retired tasks (longest-unseen and least-tried first, so a task that failed
every re-check is visited ever more rarely), and every ``reestimate_every`` rollouts
the evidence is discounted by ``decay`` and every tier recomputed.

The default band is asymmetric on purpose: with ``k = 3`` and the thresholds 0.20/0.85 a
task stays while its success probability is roughly in ``[0.07, 0.5]``. A training
policy only makes tasks easier, so a task it already passes more often than not will
soon give no GRPO signal, while a hard task that it sometimes solves is the next one to
learn from (with ``k = 4`` a task that passed 4 of its first 8 rollouts, the best bet
there is, was retired as too easy).

One default configuration serves every learner in ``benchmarks/curriculum.py``
(one-skill, multi-skill with transfer and decay, noisy labels with broken tasks); the
defaults were chosen on seeds (200-207) that neither the benchmark's reported table
(seeds 0-9) nor its held-out check (seeds 100-109) uses.

The state is plain JSON; see :mod:`forgegym.curricula` for its schema.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from forgegym.core.task import TaskBank, UnknownTaskError
from forgegym.curricula.config import (
    STATE_FORMAT,
    TIERS,
    CurriculumConfig,
    Tier,
    config_from_state,
)
from forgegym.curricula.estimator import (
    beta_expected_pass_at_k,
    beta_expected_passk_slope,
    beta_expected_variance,
)
from forgegym.curricula.stats import TaskStats, logit, sigmoid

__all__ = ["CurriculumConfig", "CurriculumScheduler", "STATE_FORMAT", "TIERS", "Tier"]

_FAST, _SLOW = 0.5, 0.1  # EMA rates of the learning-progress estimate


class CurriculumScheduler:
    """Pick training tasks from a family's :class:`~forgegym.core.task.TaskBank` by pass@k.

    Args:
        task_bank: the family's bank (``task_ids``/``sample``/``get``/``difficulty_levels``).
        config: a :class:`CurriculumConfig` (or a dict of its fields).
        task_ids: an initial pool; by default the pool is filled from the bank on demand.

    Typical use::

        scheduler = CurriculumScheduler(env.unwrapped.task_bank)
        task_id = scheduler.next_task()
        ...  # run one or more rollouts
        scheduler.record(task_id, successes=3, trials=8)

    Thread-safe: reward functions and dataset iterators may call it from different
    threads.
    """

    def __init__(
        self,
        task_bank: TaskBank,
        config: CurriculumConfig | dict[str, Any] | None = None,
        *,
        task_ids: Iterable[str] | None = None,
    ) -> None:
        if config is None:
            config = CurriculumConfig()
        elif isinstance(config, dict):
            config = CurriculumConfig(**config)
        elif not isinstance(config, CurriculumConfig):
            raise ValueError(
                f"config must be a CurriculumConfig or dict, got {type(config).__name__}"
            )
        self.task_bank = task_bank
        self.config = config
        levels = tuple(getattr(task_bank, "difficulty_levels", ()) or ())
        if config.difficulty is not None and levels and config.difficulty not in levels:
            raise ValueError(
                f"config.difficulty must be one of {list(levels)}, got {config.difficulty!r}"
            )
        self.levels: tuple[int, ...] = levels
        self._lock = threading.RLock()
        self._rng = np.random.default_rng(config.seed)
        self._tasks: dict[str, TaskStats] = {}
        self._tier_counts: dict[Tier, int] = dict.fromkeys(TIERS, 0)
        # Per level: [recency-weighted first-group successes, trials, episode of update].
        self._level_stats: dict[int | None, list[float]] = {}
        self._level_updates = 0
        self._level_cache: tuple[Any, float, dict[int | None, float], float] | None = None
        self.episode = 0
        self._next_seed = 0
        self._since_reestimate = 0
        self._exhausted_levels: set[int | None] = set()
        self.replenishments = 0
        self.reestimations = 0
        self.history: list[dict[str, Any]] = []
        self.timeline: list[dict[str, Any]] = []
        if task_ids is not None:
            self.add_tasks(task_ids)

    # ------------------------------------------------------------ estimates
    def _fresh(self, difficulty: int | None) -> TaskStats:
        return TaskStats(self.config.prior_alpha, self.config.prior_beta, difficulty, self.episode)

    def _classify(self, stats: TaskStats) -> Tier:
        # `min_trials` counts real rollouts: decay widens the posterior but must not
        # push a retired task back into the queue unseen (re-checks do that).
        if stats.trials < self.config.min_trials:
            return "learnable"
        if stats.trials >= self.config.retire_after:
            if stats.successes <= 0.0:
                return "too_hard"
            if stats.successes >= stats.trials:
                return "too_easy"
        value = beta_expected_pass_at_k(stats.alpha, stats.beta, self.config.k)
        if value >= self.config.too_easy:
            return "too_easy"
        if value < self.config.too_hard:
            return "too_hard"
        return "learnable"

    def _score(self, a: float, b: float) -> float:
        if self.config.learnability == "variance":
            return beta_expected_variance(a, b)
        return beta_expected_passk_slope(a, b, self.config.k)

    def _effective(
        self, stats: TaskStats, means: dict[int | None, float] | None = None
    ) -> tuple[float, float]:
        """The task's evidence on top of its level's prior (``means``: a cache)."""
        mean = (means or self._level_table()[1]).get(stats.difficulty, 0.5)
        strength = self.prior_strength()
        return (
            strength * mean + max(stats.alpha - self.config.prior_alpha, 0.0),
            strength * (1.0 - mean) + max(stats.beta - self.config.prior_beta, 0.0),
        )

    def _learnability(
        self, stats: TaskStats, means: dict[int | None, float] | None = None
    ) -> float:
        return self._score(*self._effective(stats, means))

    def _set_tier(self, stats: TaskStats) -> None:
        tier = self._classify(stats)
        if tier != stats.tier:
            self._tier_counts[stats.tier] -= 1
            self._tier_counts[tier] += 1
            stats.tier = tier

    def posterior(self, task_id: str) -> tuple[float, float]:
        """``(alpha, beta)`` of the task's Beta posterior (config prior + its evidence)."""
        stats = self._tasks[task_id]
        return stats.alpha, stats.beta

    def effective_posterior(self, task_id: str) -> tuple[float, float]:
        """``(alpha, beta)`` with the level prior in place of the config prior."""
        with self._lock:
            return self._effective(self._tasks[task_id])

    def pass_at_k_estimate(self, task_id: str) -> float:
        """Posterior expected pass@k of a task."""
        alpha, beta = self.posterior(task_id)
        return beta_expected_pass_at_k(alpha, beta, self.config.k)

    def tier(self, task_id: str) -> Tier:
        return self._tasks[task_id].tier

    def learnability(self, task_id: str) -> float:
        with self._lock:
            return self._learnability(self._tasks[task_id])

    def learning_progress(self, task_id: str) -> float:
        """``|fast EMA - slow EMA|`` of the task's group success rates (0 when untried)."""
        stats = self._tasks[task_id]
        return abs(stats.fast - stats.slow)

    def tier_sizes(self) -> dict[str, int]:
        """How many pool tasks are in each tier."""
        return {str(tier): count for tier, count in self._tier_counts.items()}

    @property
    def task_pool(self) -> list[str]:
        return list(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._tasks

    # ------------------------------------------------------------ level prior
    def _level_observed(self, level: int | None) -> tuple[float, float] | None:
        """Recency-weighted (successes, trials) of first groups at ``level``."""
        entry = self._level_stats.get(level)
        if entry is None or entry[1] <= 0:
            return None
        keep = math.exp(-max(self.episode - entry[2], 0.0) / self.config.level_horizon)
        return entry[0] * keep, entry[1] * keep

    def _level_table(self) -> tuple[float, dict[int | None, float]]:
        """(gap, {level: mean}) for every level; cached until the next record."""
        key = (self.episode, len(self._level_stats), self._level_updates)
        if self._level_cache is not None and self._level_cache[0] == key:
            return self._level_cache[1], self._level_cache[2]
        observed = {lv: self._level_observed(lv) for lv in self._level_stats}
        rates = {lv: logit(o[0] / o[1]) for lv, o in observed.items() if o and o[1] >= 1}
        gaps, weights = [self.config.level_gap], [1.0]
        for lower, upper in zip(self.levels, self.levels[1:], strict=False):
            if lower in rates and upper in rates:
                a, b = observed[lower], observed[upper]
                assert a is not None and b is not None
                gaps.append(rates[lower] - rates[upper])
                weights.append(4.0 * min(a[1], b[1]) / (a[1] + b[1]))
        gap = min(max(float(np.average(gaps, weights=weights)), 0.1), 4.0)
        strength = self._prior_strength()
        means: dict[int | None, float] = {}
        for level in (*self.levels, *(lv for lv in self._level_stats if lv not in self.levels)):
            center = 0.5
            if level in self.levels:
                position = self.levels.index(level)
                best: tuple[int, float] | None = None  # (distance, predicted logit)
                for j, other in enumerate(self.levels):
                    closer = best is None or abs(j - position) < best[0]
                    if other != level and other in rates and closer:
                        best = (abs(j - position), rates[other] - gap * (position - j))
                if best is not None:
                    center = sigmoid(best[1])
            seen = observed.get(level)
            if seen is not None:
                center = (seen[0] + strength * center) / (seen[1] + strength)
            means[level] = min(max(center, 0.01), 0.99)
        self._level_cache = (key, gap, means, strength)
        return gap, means

    def _prior_strength(self) -> float:
        """Method-of-moments ``alpha + beta`` of the level priors, pooled over levels.

        Within a level, the between-task variance of ``p`` is the variance of the
        first-group rates minus their binomial noise (``E[q(1-q)/(n-1)]``), and a Beta
        prior with mean ``m`` has ``alpha + beta = m(1-m) / Var(p) - 1``. Pooled over
        levels and shrunk towards ``level_prior_strength`` with the weight of 8 groups.
        """
        prior = self.config.level_prior_strength
        groups = scale = between = 0.0
        for entry in self._level_stats.values():
            if len(entry) < 7 or entry[3] <= 0:
                continue  # no group of two or more rollouts here (the wrapper's case)
            keep = math.exp(-max(self.episode - entry[2], 0.0) / self.config.level_horizon)
            w = entry[3] * keep
            if w < 1e-9:
                continue
            mean = entry[4] / entry[3]
            spread = max(entry[5] / entry[3] - mean * mean, 0.0)
            groups += w
            scale += w * mean * (1.0 - mean)
            between += w * max(spread - entry[6] / entry[3], 0.0)
        if groups <= 0:
            return prior
        estimate = scale / max(between, 1e-3 * groups) - 1.0
        estimate = min(max(estimate, 0.3), 50.0)
        return (groups * estimate + 8.0 * prior) / (groups + 8.0)

    def prior_strength(self) -> float:
        """The level priors' weight ``alpha + beta`` now (learned from the data)."""
        with self._lock:
            self._level_table()
            assert self._level_cache is not None
            return self._level_cache[3]

    def level_gap(self) -> float:
        """Logit gap between adjacent levels: the prior gap averaged with the data's."""
        with self._lock:
            return self._level_table()[0]

    def level_mean(self, level: int | None) -> float:
        """The online prior mean success of a new task at ``level``.

        The level's recency-weighted first-group success rate, shrunk (with the weight
        of ``level_prior_strength`` rollouts) towards what its nearest observed level
        predicts through :meth:`level_gap`; 0.5 when nothing is known.
        """
        with self._lock:
            return self._level_table()[1].get(level, 0.5)

    def fresh_learnability(self, level: int | None) -> float:
        """The expected learnability of a new, untried task at ``level``.

        The level prior's prediction, corrected by what new tasks at that level gave:
        with ``"variance"`` learnability, ``q(1-q) n/(n-1)`` of a first group of ``n``
        rollouts is an unbiased estimate of a new task's ``E[p(1-p)]``, whatever the
        shape of the level's spread (noisy labels and broken tasks make it bimodal,
        which a Beta prior fitted by its mean and variance overrates). The recency-
        weighted mean over first groups is shrunk towards the prediction with the
        weight of ``fresh_shrinkage`` groups.
        """
        with self._lock:
            strength = self.prior_strength()
            mean = self.level_mean(level)
            predicted = self._score(strength * mean, strength * (1.0 - mean))
            if self.config.learnability != "variance":
                return predicted
            entry = self._level_stats.get(level)
            if entry is None or len(entry) < 8 or entry[3] <= 0:
                return predicted
            keep = math.exp(-max(self.episode - entry[2], 0.0) / self.config.level_horizon)
            groups = entry[3] * keep
            # p(1-p) <= 1/4: clip what a few lucky groups overestimate.
            observed = min(entry[7] / entry[3], 0.25)
            shrink = self.config.fresh_shrinkage
            return (groups * observed + shrink * predicted) / (groups + shrink)

    def current_level(self) -> int | None:
        """The frontier: the level new tasks are drawn at.

        The level whose prior mean makes a new task most learnable, among the levels
        with data and the first untried level above (and below) them; with no data at
        all, the easiest level. Exhausted levels are skipped; ties go to the easier.
        """
        if self.config.difficulty is not None:
            return self.config.difficulty
        if not self.levels or not self.config.adaptive_difficulty:
            return None
        open_levels = [lv for lv in self.levels if lv not in self._exhausted_levels]
        if not open_levels:
            return self.levels[-1]
        seen = [lv for lv in open_levels if self._level_observed(lv) is not None]
        if not seen:
            return open_levels[0]
        candidates = set(seen)
        positions = [open_levels.index(lv) for lv in seen]
        if max(positions) + 1 < len(open_levels):
            candidates.add(open_levels[max(positions) + 1])
        if min(positions) > 0:
            candidates.add(open_levels[min(positions) - 1])
        best: int | None = None
        best_score = -1.0
        for level in open_levels:
            if level not in candidates:
                continue
            score = self.fresh_learnability(level)
            if score > best_score + 1e-12:
                best, best_score = level, score
        return best

    # ------------------------------------------------------------ the pool
    def _difficulty_of(self, task_id: str) -> int | None:
        try:
            return int(self.task_bank.get(task_id).difficulty)
        except (UnknownTaskError, KeyError, ValueError):
            return None

    def add_tasks(self, task_ids: Iterable[str], difficulty: int | None = None) -> list[str]:
        """Add tasks to the pool (known ones are kept); returns the ids actually added."""
        added: list[str] = []
        with self._lock:
            for task_id in task_ids:
                if not isinstance(task_id, str) or not task_id:
                    raise ValueError(f"task_ids: expected non-empty strings, got {task_id!r}")
                if task_id in self._tasks:
                    continue
                level = difficulty if difficulty is not None else self._difficulty_of(task_id)
                self._tasks[task_id] = self._fresh(level)
                self._tier_counts["learnable"] += 1
                added.append(task_id)
        return added

    def replenish(self, n: int | None = None, level: int | None = None) -> list[str]:
        """Add up to ``n`` (default ``replenish_batch``) new tasks from the bank.

        They come from ``level`` (default: :meth:`current_level`); a level that yields
        fewer than ``n`` new ids is marked exhausted.
        """
        n = self.config.replenish_batch if n is None else n
        with self._lock:
            if level is None:
                level = self.current_level()
            added: list[str] = []
            for _ in range(4):  # a few fresh seeds before declaring the level exhausted
                seed = self.config.seed * 1_000_003 + self._next_seed
                self._next_seed += 1
                ids = self.task_bank.task_ids(n - len(added), seed=seed, difficulty=level)
                added += self.add_tasks(ids, difficulty=level)
                if len(added) >= n:
                    break
            if not added:
                try:
                    task = self.task_bank.sample(self._rng, level)
                    added += self.add_tasks([task.task_id], difficulty=task.difficulty)
                except (UnknownTaskError, ValueError):
                    pass
            if len(added) < n:
                self._exhausted_levels.add(level)
            self.replenishments += 1
            self._snapshot("replenish")
            return added

    # ------------------------------------------------------------ sampling
    def _untried(self, level: int | None) -> list[str]:
        return [
            tid
            for tid, s in self._tasks.items()
            if s.trials == 0 and s.tier == "learnable" and s.difficulty == level
        ]

    def _fresh_task(self) -> str | None:
        """An untried task at the frontier level (replenishing when none is left)."""
        tried_levels = 0
        while tried_levels <= len(self.levels):
            level = self.current_level()
            untried = self._untried(level)
            if not untried:
                self.replenish(level=level)
                untried = self._untried(level)
            if untried:
                return untried[int(self._rng.integers(len(untried)))]
            if level not in self._exhausted_levels:
                self._exhausted_levels.add(level)
            tried_levels += 1
        untried = [tid for tid, s in self._tasks.items() if s.trials == 0]
        return untried[int(self._rng.integers(len(untried)))] if untried else None

    def next_task(self) -> str:
        """Choose the next task to train on (replenishing the pool if needed)."""
        with self._lock:
            config = self.config
            learnable: list[str] = []
            stats_list: list[TaskStats] = []
            retired: list[str] = []
            for tid, s in self._tasks.items():
                if s.tier != "learnable":
                    retired.append(tid)
                elif s.trials > 0:
                    learnable.append(tid)
                    stats_list.append(s)
            if retired and self._rng.random() < config.retired_fraction:
                # Re-check retired tasks: long unseen first, much-tried ones last.
                weights = np.array(
                    [
                        (1.0 - math.exp(-max(self.episode - self._tasks[t].last_seen, 1) / 256.0))
                        / max(self._tasks[t].trials, 1)
                        for t in retired
                    ]
                )
                return retired[self._pick(weights)]
            frontier = self.current_level()
            fresh_score = self.fresh_learnability(frontier)
            bar = config.promising_ratio * fresh_score - 1e-12
            power = 1.0 / config.temperature
            horizon = config.staleness_horizon
            means = self._level_table()[1]
            promising: list[str] = []
            weights_list: list[float] = []
            for tid, s in zip(learnable, stats_list, strict=True):
                base = self._learnability(s, means)
                if base < bar:
                    continue
                stale = 1.0 - math.exp(-max(self.episode - s.last_seen, 0) / horizon)
                progress = abs(s.fast - s.slow)
                promising.append(tid)
                weights_list.append(
                    max(base, 1e-12) ** power
                    * (1.0 + config.staleness_weight * stale)
                    * (1.0 + config.progress_weight * progress)
                )
            tried, learnable = learnable, promising
            weights_list.append(max(fresh_score, 1e-12) ** power * (1.0 + config.staleness_weight))
            weights = np.asarray(weights_list)
            if len(learnable) < config.min_learnable:
                choice = len(learnable)  # too few promising tasks: explore a new one
            else:
                choice = self._pick(weights)
            if choice < len(learnable):
                return learnable[choice]
            fresh = self._fresh_task()
            if fresh is not None:
                return fresh
            if learnable:
                return learnable[self._pick(weights[:-1])]
            if tried:  # the bank has nothing new: the best of the rest
                return max(tried, key=lambda t: self._learnability(self._tasks[t], means))
            if retired:
                return retired[int(self._rng.integers(len(retired)))]
            raise RuntimeError("the task bank produced no tasks")

    def _pick(self, weights: np.ndarray) -> int:
        total = float(weights.sum())
        if not math.isfinite(total) or total <= 0:
            return int(self._rng.integers(len(weights)))
        return int(self._rng.choice(len(weights), p=weights / total))

    def sample_batch(self, n: int) -> list[str]:
        """``n`` draws of :meth:`next_task` (with replacement)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an integer >= 0, got {n!r}")
        return [self.next_task() for _ in range(n)]

    # ------------------------------------------------------------ outcomes
    def record(self, task_id: str, successes: float | bool, trials: int = 1) -> None:
        """Record ``successes`` out of ``trials`` rollouts on ``task_id``.

        ``successes`` may be a bool (one rollout) or a count in ``[0, trials]``.
        Unknown tasks are added to the pool first. A task's first record also feeds
        its level's prior mean.
        """
        if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
            raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
        value = float(successes)
        if not (0.0 <= value <= trials):
            raise ValueError(f"successes must be in [0, {trials}], got {successes!r}")
        with self._lock:
            if task_id not in self._tasks:
                self.add_tasks([task_id])
            stats = self._tasks[task_id]
            rate = value / trials
            if stats.trials == 0:
                self._observe_level(stats.difficulty, value, trials)
                stats.fast = stats.slow = rate
            else:
                stats.fast += _FAST * (rate - stats.fast)
                stats.slow += _SLOW * (rate - stats.slow)
            self._forget(stats, trials)
            stats.alpha += value
            stats.beta += trials - value
            stats.successes += value
            stats.trials += trials
            self.episode += trials
            stats.last_seen = self.episode
            self._set_tier(stats)
            stats.history.append([float(self.episode), value, float(trials)])
            if self.config.max_history:
                self.history.append(
                    {
                        "episode": self.episode,
                        "task_id": task_id,
                        "successes": value,
                        "trials": trials,
                        "success": rate,
                        "difficulty": stats.difficulty,
                        **self.tier_sizes(),
                    }
                )
                if len(self.history) > self.config.max_history:
                    del self.history[: len(self.history) - self.config.max_history]
            self._since_reestimate += trials
            if self._since_reestimate >= self.config.reestimate_every:
                self.reestimate()

    def _forget(self, stats: TaskStats, incoming: int) -> None:
        """Scale old evidence so that, with ``incoming`` new rollouts, it fits the window."""
        prior_a, prior_b = self.config.prior_alpha, self.config.prior_beta
        old = (stats.alpha - prior_a) + (stats.beta - prior_b)
        room = max(self.config.evidence_window - incoming, 0.0)
        if old > room:
            keep = room / old
            stats.alpha = prior_a + keep * (stats.alpha - prior_a)
            stats.beta = prior_b + keep * (stats.beta - prior_b)

    def _observe_level(self, level: int | None, successes: float, trials: int) -> None:
        # [successes, trials, episode, groups, sum q, sum q^2, sum q(1-q)/(n-1),
        # sum q(1-q)n/(n-1)], the last five over groups of n >= 2 rollouts (they measure
        # the spread of p and the signal a new task gives).
        entry = self._level_stats.setdefault(level, [0.0, 0.0, float(self.episode)])
        entry.extend([0.0] * (8 - len(entry)))
        keep = math.exp(-max(self.episode - entry[2], 0.0) / self.config.level_horizon)
        for j in (0, 1, 3, 4, 5, 6, 7):
            entry[j] *= keep
        entry[0] += successes
        entry[1] += trials
        entry[2] = float(self.episode)
        if trials >= 2:
            q = successes / trials
            entry[3] += 1.0
            entry[4] += q
            entry[5] += q * q
            entry[6] += q * (1.0 - q) / (trials - 1)
            entry[7] += q * (1.0 - q) * trials / (trials - 1)
        self._level_updates += 1

    def record_many(self, outcomes: Iterable[tuple[str, float | bool]]) -> None:
        """Record ``(task_id, success)`` pairs, grouped per task (one record per task)."""
        grouped: dict[str, list[float]] = {}
        for task_id, success in outcomes:
            grouped.setdefault(task_id, []).append(float(success))
        for task_id, values in grouped.items():
            self.record(task_id, sum(values), len(values))

    def reestimate(self) -> None:
        """Discount old evidence by ``decay`` and recompute every tier."""
        with self._lock:
            prior_a, prior_b, decay = (
                self.config.prior_alpha,
                self.config.prior_beta,
                self.config.decay,
            )
            for stats in self._tasks.values():
                stats.alpha = prior_a + decay * (stats.alpha - prior_a)
                stats.beta = prior_b + decay * (stats.beta - prior_b)
                self._set_tier(stats)
            self._since_reestimate = 0
            self.reestimations += 1
            self._snapshot("reestimate")

    def _snapshot(self, event: str) -> None:
        self.timeline.append(
            {"episode": self.episode, "event": event, "pool": len(self._tasks), **self.tier_sizes()}
        )
        if self.config.max_history and len(self.timeline) > self.config.max_history:
            del self.timeline[: len(self.timeline) - self.config.max_history]

    # ------------------------------------------------------------ reporting
    def stats(self) -> dict[str, Any]:
        """A summary: pool and tier sizes, unexplored tasks, level, mean pass@k, counters."""
        with self._lock:
            per_level: dict[str, dict[str, int]] = {}
            unexplored = 0
            for stats in self._tasks.values():
                entry = per_level.setdefault(str(stats.difficulty), dict.fromkeys(TIERS, 0))
                entry[stats.tier] += 1
                unexplored += stats.trials == 0
            estimates = [
                beta_expected_pass_at_k(s.alpha, s.beta, self.config.k)
                for s in self._tasks.values()
                if s.trials
            ]
            return {
                "episode": self.episode,
                "pool": len(self._tasks),
                **self.tier_sizes(),
                "unexplored": unexplored,
                "current_level": self.current_level(),
                "level_means": {str(lv): self.level_mean(lv) for lv in self.levels},
                "mean_pass_at_k": float(np.mean(estimates)) if estimates else None,
                "replenishments": self.replenishments,
                "reestimations": self.reestimations,
                "per_level": per_level,
            }

    # ------------------------------------------------------------ persistence
    def state_dict(self) -> dict[str, Any]:
        """The whole state as JSON-compatible data (schema in :mod:`forgegym.curricula`)."""
        with self._lock:
            return {
                "format": STATE_FORMAT,
                "config": self.config.model_dump(mode="json"),
                "episode": self.episode,
                "next_seed": self._next_seed,
                "since_reestimate": self._since_reestimate,
                "replenishments": self.replenishments,
                "reestimations": self.reestimations,
                "exhausted_levels": sorted(lv for lv in self._exhausted_levels if lv is not None)
                + ([None] if None in self._exhausted_levels else []),
                "rng": self._rng.bit_generator.state,
                "tier_sizes": dict(self._tier_counts),
                "levels": [[lv, *entry] for lv, entry in self._level_stats.items()],
                "tasks": {tid: s.to_json() for tid, s in self._tasks.items()},
                "history": [dict(h) for h in self.history],
                "timeline": [dict(t) for t in self.timeline],
            }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (its config replaces this scheduler's)."""
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"state: expected a dict with format {STATE_FORMAT!r}")
        config = config_from_state(state)
        with self._lock:
            self.config = config
            self._rng = np.random.default_rng(config.seed)
            self._rng.bit_generator.state = state["rng"]
            self._tasks = {tid: TaskStats.from_json(d) for tid, d in state["tasks"].items()}
            self._tier_counts = dict.fromkeys(TIERS, 0)
            for stats in self._tasks.values():
                self._tier_counts[stats.tier] += 1
            self._level_stats = {
                entry[0]: [float(x) for x in entry[1:]] for entry in state.get("levels", [])
            }
            self._level_cache = None
            self.episode = int(state["episode"])
            self._next_seed = int(state["next_seed"])
            self._since_reestimate = int(state.get("since_reestimate", 0))
            self.replenishments = int(state.get("replenishments", 0))
            self.reestimations = int(state.get("reestimations", 0))
            self._exhausted_levels = set(state.get("exhausted_levels", []))
            self.history = [dict(h) for h in state.get("history", [])]
            self.timeline = [dict(t) for t in state.get("timeline", [])]

    def save(self, path: str | Path) -> Path:
        """Write :meth:`state_dict` as JSON to ``path``."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.state_dict()), encoding="utf-8")
        tmp.replace(path)  # atomic: a plot reading the file never sees half of it
        return path

    @classmethod
    def load(cls, path: str | Path, task_bank: TaskBank) -> CurriculumScheduler:
        """A scheduler over ``task_bank`` restored from a :meth:`save` file."""
        state = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(state, dict) or "config" not in state:
            raise ValueError(f"{path}: not a curriculum state file")
        scheduler = cls(task_bank, config_from_state(state))
        scheduler.load_state_dict(state)
        return scheduler

    def task_ids_seen(self) -> Sequence[str]:
        """Ids of the pool tasks that have at least one recorded rollout."""
        return [tid for tid, s in self._tasks.items() if s.trials]
