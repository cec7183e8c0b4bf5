"""``CurriculumScheduler``: which task to train on next, from pass@k posteriors.

Every task in the scheduler's pool carries a ``Beta(alpha, beta)`` posterior over its
success probability ``p`` (prior ``Beta(prior_alpha, prior_beta)``). From it the
scheduler derives

* the expected pass@k ``E[1-(1-p)^k]``, which places a task in a *tier*:
  ``too_easy`` (>= ``too_easy``), ``too_hard`` (< ``too_hard``) or ``learnable``;
  a task with fewer than ``min_trials`` recorded rollouts stays ``learnable``;
* a *learnability* score used as sampling weight among learnable tasks, either
  ``"variance"`` ``E[p(1-p)]`` (the chance a GRPO group has a non-zero advantage, in
  expectation) or ``"passk_slope"`` ``E[k p (1-p)^k]`` (how much pass@k moves per unit
  of logit skill; it peaks at ``p = 1/(k+1)``, below a 0.20 floor on ``p`` for k > 1,
  which is why the tiers are on pass@k, not on ``p``). ``benchmarks/curriculum.py``
  measures which serves better; the defaults (``k=4``, ``"passk_slope"``, decay 0.9
  every 512 rollouts, 16 promising tasks) are what it found best on the simulated
  learner (rollouts to a held-out pass@8 target).

Estimates go stale as the policy learns, so:

* a *staleness* term raises a learnable task's weight with the time since it was
  last seen, and a small ``retired_fraction`` of draws goes to too-easy/too-hard
  tasks, oldest-seen first, to re-check them;
* every ``reestimate_every`` rollouts the evidence is discounted by ``decay``
  (``alpha <- prior + decay * (alpha - prior)``) and every tier recomputed, so a
  retired task whose evidence has faded returns to the learnable queue.

When fewer than ``min_learnable`` tasks are learnable, the pool is *replenished*
from the family's bank with ``task_ids(n, seed=<growing seed>, difficulty=level)``
(falling back to ``sample(rng, level)``). With ``adaptive_difficulty`` the level is the
easiest one not yet mastered (at least half of its classified tasks too easy) and
not exhausted, so new tasks follow the learner's frontier.

The state is plain JSON; see :mod:`forgegym.curricula` for its schema.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from forgegym.core.task import TaskBank, UnknownTaskError
from forgegym.curricula.estimator import (
    beta_expected_pass_at_k,
    beta_expected_passk_slope,
    beta_expected_variance,
)

__all__ = ["CurriculumConfig", "CurriculumScheduler", "STATE_FORMAT", "TIERS", "Tier"]

Tier = Literal["too_easy", "learnable", "too_hard"]
TIERS: tuple[Tier, ...] = ("too_easy", "learnable", "too_hard")
STATE_FORMAT = "forgegym.curriculum/1"


class CurriculumConfig(BaseModel):
    """Validated, immutable settings of a :class:`CurriculumScheduler`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    k: int = Field(default=4, ge=1, description="The k of pass@k used for tiers.")
    too_easy: float = Field(default=0.85, gt=0.0, le=1.0, description="pass@k at/above: too easy.")
    too_hard: float = Field(default=0.20, ge=0.0, lt=1.0, description="pass@k below: too hard.")
    prior_alpha: float = Field(default=1.0, gt=0.0)
    prior_beta: float = Field(default=1.0, gt=0.0)
    min_trials: float = Field(
        default=4.0, ge=0.0, description="Recorded rollouts needed before a tier is final."
    )
    learnability: Literal["variance", "passk_slope"] = "passk_slope"
    temperature: float = Field(
        default=0.5, gt=0.0, description="Weights are learnability ** (1 / temperature)."
    )
    staleness_weight: float = Field(default=0.5, ge=0.0)
    staleness_horizon: float = Field(default=256.0, gt=0.0, description="In rollouts.")
    retired_fraction: float = Field(
        default=0.02, ge=0.0, le=1.0, description="Share of draws that re-check retired tasks."
    )
    min_learnable: int = Field(
        default=16, ge=1, description="Replenish when fewer learnable tasks are promising."
    )
    promising_ratio: float = Field(
        default=1.0,
        ge=0.0,
        description="A learnable task is promising when its learnability is at least this "
        "multiple of an untried task's (the prior's): below that, a fresh task is a better bet.",
    )
    replenish_batch: int = Field(default=16, ge=1)
    reestimate_every: int = Field(default=512, ge=1, description="Rollouts between re-estimations.")
    decay: float = Field(
        default=0.9, gt=0.0, le=1.0, description="Evidence kept per re-estimation."
    )
    adaptive_difficulty: bool = True
    difficulty: int | None = Field(default=None, description="Fix replenishment to one level.")
    max_history: int = Field(default=100_000, ge=0, description="Rollout records kept for plots.")
    seed: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> CurriculumConfig:
        if self.too_hard >= self.too_easy:
            raise ValueError(f"too_hard ({self.too_hard}) must be below too_easy ({self.too_easy})")
        return self


class _TaskStats:
    """Mutable per-task record (kept out of pydantic for speed in the hot loop)."""

    __slots__ = (
        "alpha",
        "beta",
        "difficulty",
        "successes",
        "trials",
        "last_seen",
        "added",
        "tier",
        "history",
    )

    def __init__(self, alpha: float, beta: float, difficulty: int | None, added: int) -> None:
        self.alpha = alpha
        self.beta = beta
        self.difficulty = difficulty
        self.successes = 0.0
        self.trials = 0
        self.last_seen = -1
        self.added = added
        self.tier: Tier = "learnable"
        self.history: list[list[float]] = []

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "beta": self.beta,
            "difficulty": self.difficulty,
            "successes": self.successes,
            "trials": self.trials,
            "last_seen": self.last_seen,
            "added": self.added,
            "tier": self.tier,
            "history": self.history,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _TaskStats:
        stats = cls(
            float(data["alpha"]), float(data["beta"]), data.get("difficulty"), int(data["added"])
        )
        stats.successes = float(data["successes"])
        stats.trials = int(data["trials"])
        stats.last_seen = int(data["last_seen"])
        tier = data.get("tier", "learnable")
        if tier not in TIERS:
            raise ValueError(f"state: unknown tier {tier!r}")
        stats.tier = tier
        stats.history = [list(map(float, h)) for h in data.get("history", [])]
        return stats


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
        self._tasks: dict[str, _TaskStats] = {}
        self._tier_counts: dict[Tier, int] = dict.fromkeys(TIERS, 0)
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
    def _fresh(self, difficulty: int | None) -> _TaskStats:
        return _TaskStats(self.config.prior_alpha, self.config.prior_beta, difficulty, self.episode)

    def _classify(self, stats: _TaskStats) -> Tier:
        # `min_trials` counts real rollouts: decay widens the posterior but must not
        # push a retired task back into the queue unseen (re-checks do that).
        if stats.trials < self.config.min_trials:
            return "learnable"
        value = beta_expected_pass_at_k(stats.alpha, stats.beta, self.config.k)
        if value >= self.config.too_easy:
            return "too_easy"
        if value < self.config.too_hard:
            return "too_hard"
        return "learnable"

    def _learnability(self, stats: _TaskStats) -> float:
        if self.config.learnability == "variance":
            return beta_expected_variance(stats.alpha, stats.beta)
        return beta_expected_passk_slope(stats.alpha, stats.beta, self.config.k)

    def _set_tier(self, stats: _TaskStats) -> None:
        tier = self._classify(stats)
        if tier != stats.tier:
            self._tier_counts[stats.tier] -= 1
            self._tier_counts[tier] += 1
            stats.tier = tier

    def posterior(self, task_id: str) -> tuple[float, float]:
        """``(alpha, beta)`` of the task's Beta posterior."""
        stats = self._tasks[task_id]
        return stats.alpha, stats.beta

    def pass_at_k_estimate(self, task_id: str) -> float:
        """Posterior expected pass@k of a task."""
        alpha, beta = self.posterior(task_id)
        return beta_expected_pass_at_k(alpha, beta, self.config.k)

    def tier(self, task_id: str) -> Tier:
        return self._tasks[task_id].tier

    def learnability(self, task_id: str) -> float:
        return self._learnability(self._tasks[task_id])

    def tier_sizes(self) -> dict[str, int]:
        """How many pool tasks are in each tier."""
        return dict(self._tier_counts)

    @property
    def task_pool(self) -> list[str]:
        return list(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._tasks

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

    def current_level(self) -> int | None:
        """The difficulty new tasks are drawn at: the frontier level.

        Each level is scored by the mean learnability of its tried tasks under their
        current (decayed) posteriors; the easiest level with no tried task scores as the
        prior, and levels above it are not considered yet. The best-scoring level wins,
        ties to the easier one, so the level rises as tasks get solved and falls back
        when they turn out too hard. Exhausted levels are skipped.
        """
        if self.config.difficulty is not None:
            return self.config.difficulty
        if not self.levels or not self.config.adaptive_difficulty:
            return None
        totals: dict[int | None, list[float]] = {}
        for stats in self._tasks.values():
            if stats.trials:
                entry = totals.setdefault(stats.difficulty, [0.0, 0.0])
                entry[0] += self._learnability(stats)
                entry[1] += 1
        best: int | None = None
        best_score = -1.0
        prior = self._prior_learnability()
        for level in self.levels:
            if level in self._exhausted_levels:
                continue
            score = totals[level][0] / totals[level][1] if level in totals else prior
            if score > best_score + 1e-12:
                best, best_score = level, score
            if level not in totals:
                break
        if best is None:
            remaining = [lv for lv in self.levels if lv not in self._exhausted_levels]
            return remaining[-1] if remaining else self.levels[-1]
        return best

    def replenish(self, n: int | None = None) -> list[str]:
        """Add up to ``n`` (default ``replenish_batch``) new tasks from the bank."""
        n = self.config.replenish_batch if n is None else n
        with self._lock:
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
    def _prior_learnability(self) -> float:
        return self._learnability(self._fresh(None))

    def promising_count(self) -> int:
        """Learnable tasks at least ``promising_ratio`` times as learnable as an untried one."""
        bar = self.config.promising_ratio * self._prior_learnability() - 1e-12
        return sum(
            1
            for s in self._tasks.values()
            if s.tier == "learnable" and self._learnability(s) >= bar
        )

    def _ensure_pool(self) -> None:
        # Replenish until enough learnable tasks are promising, or no level has anything
        # new (an empty replenishment marks its level exhausted, so the next one tries
        # another level). Counting only promising tasks keeps stale, nearly-solved
        # "learnable" tasks from starving the queue of fresh ones.
        empty = 0
        while self.promising_count() < self.config.min_learnable and empty <= len(self.levels):
            empty = 0 if self.replenish() else empty + 1

    def next_task(self) -> str:
        """Choose the next task to train on (replenishing the pool if needed)."""
        with self._lock:
            self._ensure_pool()
            if not self._tasks:
                raise RuntimeError("the task bank produced no tasks")
            ids = list(self._tasks)
            stats = [self._tasks[i] for i in ids]
            learnable = [j for j, s in enumerate(stats) if s.tier == "learnable"]
            retired = [j for j, s in enumerate(stats) if s.tier != "learnable"]
            use_retired = bool(retired) and (
                not learnable or self._rng.random() < self.config.retired_fraction
            )
            horizon = self.config.staleness_horizon
            if use_retired:
                # Re-check retired tasks, the longest-unseen first.
                ages = np.array([self.episode - stats[j].last_seen for j in retired], dtype=float)
                weights = 1.0 - np.exp(-np.maximum(ages, 1.0) / horizon)
                pool = retired
            else:
                base = np.array([self._learnability(stats[j]) for j in learnable], dtype=float)
                ages = np.array(
                    [
                        self.episode
                        - (stats[j].last_seen if stats[j].last_seen >= 0 else stats[j].added)
                        for j in learnable
                    ],
                    dtype=float,
                )
                stale = 1.0 - np.exp(-np.maximum(ages, 0.0) / horizon)
                weights = np.power(np.maximum(base, 1e-12), 1.0 / self.config.temperature)
                weights = weights * (1.0 + self.config.staleness_weight * stale)
                pool = learnable
            total = float(weights.sum())
            if not math.isfinite(total) or total <= 0:
                choice = int(self._rng.integers(len(pool)))
            else:
                choice = int(self._rng.choice(len(pool), p=weights / total))
            return ids[pool[choice]]

    def sample_batch(self, n: int) -> list[str]:
        """``n`` draws of :meth:`next_task` (with replacement)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an integer >= 0, got {n!r}")
        return [self.next_task() for _ in range(n)]

    # ------------------------------------------------------------ outcomes
    def record(self, task_id: str, successes: float | bool, trials: int = 1) -> None:
        """Record ``successes`` out of ``trials`` rollouts on ``task_id``.

        ``successes`` may be a bool (one rollout) or a count in ``[0, trials]``.
        Unknown tasks are added to the pool first.
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
                        "success": value / trials,
                        "difficulty": stats.difficulty,
                        **self._tier_counts,
                    }
                )
                if len(self.history) > self.config.max_history:
                    del self.history[: len(self.history) - self.config.max_history]
            self._since_reestimate += trials
            if self._since_reestimate >= self.config.reestimate_every:
                self.reestimate()

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
            {"episode": self.episode, "event": event, "pool": len(self._tasks), **self._tier_counts}
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
                **self._tier_counts,
                "unexplored": unexplored,
                "current_level": self.current_level(),
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
                "tasks": {tid: s.to_json() for tid, s in self._tasks.items()},
                "history": [dict(h) for h in self.history],
                "timeline": [dict(t) for t in self.timeline],
            }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (the config must match this scheduler's)."""
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"state: expected a dict with format {STATE_FORMAT!r}")
        config = CurriculumConfig(**state["config"])
        with self._lock:
            self.config = config
            self._rng = np.random.default_rng(config.seed)
            self._rng.bit_generator.state = state["rng"]
            self._tasks = {tid: _TaskStats.from_json(d) for tid, d in state["tasks"].items()}
            self._tier_counts = dict.fromkeys(TIERS, 0)
            for stats in self._tasks.values():
                self._tier_counts[stats.tier] += 1
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
        scheduler = cls(task_bank, CurriculumConfig(**state["config"]))
        scheduler.load_state_dict(state)
        return scheduler

    def task_ids_seen(self) -> Sequence[str]:
        """Ids of the pool tasks that have at least one recorded rollout."""
        return [tid for tid, s in self._tasks.items() if s.trials]
