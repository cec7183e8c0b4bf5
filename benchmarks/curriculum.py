"""Simulated-learner benchmark of task-selection curricula.

A student has a latent skill ``theta``; a task has a latent difficulty ``d``; one
rollout succeeds with probability ``sigmoid(a * (theta - d))``. Training happens in
GRPO groups of ``G`` rollouts on one task: the group's learning signal is its
empirical outcome variance ``q (1 - q)`` (``q`` = success fraction; a group with all
outcomes equal has zero advantage, hence no gradient), and ``theta`` grows by
``lr * q (1 - q)``. We measure how many rollouts each curriculum needs until the
held-out mean pass@k (exact, over tasks of every level) reaches ``target``.

Curricula compared (all see the same bank of levelled tasks):

* ``uniform`` — a uniformly random task of the bank;
* ``fixed_band`` — the seeds' rule: keep tasks whose measured success rate is in
  [0.20, 0.85] (unseen tasks count as eligible), uniformly among eligible;
* ``level_up`` — reasoning-gym style: train at one level; raise it when the mean
  success over the last ``window`` rollouts exceeds 0.7, lower it below 0.3;
* ``ours`` — :class:`forgegym.curricula.CurriculumScheduler` with its default
  config, driven by the simulated outcomes.

Run ``python benchmarks/curriculum.py`` for the table (median over seeds).
"""

from __future__ import annotations

import argparse
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from forgegym.core.task import Task, UnknownTaskError
from forgegym.curricula import CurriculumConfig, CurriculumScheduler

__all__ = ["SimBank", "run_curriculum_bench", "main"]


@dataclass(frozen=True)
class SimSettings:
    """Parameters of the simulated learner and bank."""

    levels: int = 10
    per_level: int = 200
    level_step: float = 0.8  # latent difficulty between adjacent levels
    level_offset: float = -1.0  # difficulty of level 0 (theta starts at 0)
    task_noise: float = 0.5  # spread of difficulty within a level
    slope: float = 1.5  # the `a` of sigmoid(a (theta - d))
    lr: float = 0.04
    group: int = 8  # G, rollouts per GRPO group
    k: int = 8  # held-out pass@k
    target: float = 0.8
    budget: int = 120_000  # rollouts before giving up
    held_out: int = 400


class SimBank:
    """A TaskBank over latent difficulties: ``sim/d<level>/<index>``."""

    family = "sim"

    def __init__(self, settings: SimSettings, seed: int) -> None:
        self.settings = settings
        self.difficulty_levels = tuple(range(settings.levels))
        rng = np.random.default_rng(10_000 + seed)
        base = settings.level_offset + settings.level_step * np.arange(settings.levels)
        self.latent = base[:, None] + settings.task_noise * rng.standard_normal(
            (settings.levels, settings.per_level)
        )

    @staticmethod
    def _parse(task_id: str) -> tuple[int, int]:
        try:
            _, level, index = task_id.split("/")
            return int(level[1:]), int(index)
        except ValueError:
            raise UnknownTaskError(task_id) from None

    def difficulty(self, task_id: str) -> float:
        level, index = self._parse(task_id)
        return float(self.latent[level, index])

    def get(self, task_id: str) -> Task:
        level, index = self._parse(task_id)
        if not (0 <= level < self.settings.levels and 0 <= index < self.settings.per_level):
            raise UnknownTaskError(task_id)
        return Task(task_id=task_id, family="sim", difficulty=level, title=task_id, description="")

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        level = int(rng.integers(self.settings.levels)) if difficulty is None else difficulty
        return self.get(f"sim/d{level}/{int(rng.integers(self.settings.per_level))}")

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        rng = np.random.default_rng(seed)
        levels = self.difficulty_levels if difficulty is None else (difficulty,)
        universe = [f"sim/d{lv}/{i}" for lv in levels for i in range(self.settings.per_level)]
        picks = rng.choice(len(universe), size=min(n, len(universe)), replace=False)
        return [universe[int(i)] for i in picks]

    def all_ids(self) -> list[str]:
        return self.task_ids(self.settings.levels * self.settings.per_level, seed=0)


@dataclass
class _Uniform:
    bank: SimBank
    rng: np.random.Generator
    ids: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.ids = self.bank.all_ids()

    def choose(self) -> str:
        return self.ids[int(self.rng.integers(len(self.ids)))]

    def feedback(self, task_id: str, successes: int, trials: int) -> None:
        pass


@dataclass
class _FixedBand:
    bank: SimBank
    rng: np.random.Generator
    low: float = 0.20
    high: float = 0.85
    stats: dict[str, list[int]] = field(default_factory=dict)
    excluded: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.ids = self.bank.all_ids()

    def choose(self) -> str:
        # Rejection-sample a task whose measured rate is in band (unseen ones count).
        for _ in range(10_000):
            tid = self.ids[int(self.rng.integers(len(self.ids)))]
            if tid not in self.excluded:
                return tid
        return self.ids[int(self.rng.integers(len(self.ids)))]

    def feedback(self, task_id: str, successes: int, trials: int) -> None:
        s = self.stats.setdefault(task_id, [0, 0])
        s[0] += successes
        s[1] += trials
        rate = s[0] / s[1]
        if self.low <= rate <= self.high:
            self.excluded.discard(task_id)
        else:
            self.excluded.add(task_id)


@dataclass
class _LevelUp:
    bank: SimBank
    rng: np.random.Generator
    window: int = 32
    up: float = 0.7
    down: float = 0.3
    level: int = 0
    recent: deque = field(default_factory=deque)

    def choose(self) -> str:
        index = int(self.rng.integers(self.bank.settings.per_level))
        return f"sim/d{self.level}/{index}"

    def feedback(self, task_id: str, successes: int, trials: int) -> None:
        self.recent.extend([1] * successes + [0] * (trials - successes))
        while len(self.recent) > self.window:
            self.recent.popleft()
        if len(self.recent) < self.window:
            return
        mean = sum(self.recent) / len(self.recent)
        if mean > self.up and self.level < len(self.bank.difficulty_levels) - 1:
            self.level += 1
            self.recent.clear()
        elif mean < self.down and self.level > 0:
            self.level -= 1
            self.recent.clear()


@dataclass
class _Ours:
    bank: SimBank
    rng: np.random.Generator
    config: CurriculumConfig

    def __post_init__(self) -> None:
        self.scheduler = CurriculumScheduler(self.bank, self.config)

    def choose(self) -> str:
        return self.scheduler.next_task()

    def feedback(self, task_id: str, successes: int, trials: int) -> None:
        self.scheduler.record(task_id, successes, trials)


def _held_out_pass_at_k(theta: float, held: np.ndarray, settings: SimSettings) -> float:
    p = 1.0 / (1.0 + np.exp(-settings.slope * (theta - held)))
    return float(np.mean(1.0 - (1.0 - p) ** settings.k))


def simulate(
    name: str, seed: int, settings: SimSettings, config: CurriculumConfig | None = None
) -> int:
    """Rollouts ``name`` needs to reach the target (``settings.budget`` if never)."""
    bank = SimBank(settings, seed)
    rng = np.random.default_rng(seed)
    held_rng = np.random.default_rng(50_000 + seed)
    levels = held_rng.integers(settings.levels, size=settings.held_out)
    held = (
        settings.level_offset
        + settings.level_step * levels
        + settings.task_noise * held_rng.standard_normal(settings.held_out)
    )
    if name == "uniform":
        strategy: Any = _Uniform(bank, rng)
    elif name == "fixed_band":
        strategy = _FixedBand(bank, rng)
    elif name == "level_up":
        strategy = _LevelUp(bank, rng)
    elif name == "ours":
        strategy = _Ours(
            bank, rng, (config or CurriculumConfig()).model_copy(update={"seed": seed})
        )
    else:
        raise ValueError(f"name: unknown strategy {name!r}")
    theta = 0.0
    rollouts = 0
    outcome_rng = np.random.default_rng(90_000 + seed)
    while rollouts < settings.budget:
        if _held_out_pass_at_k(theta, held, settings) >= settings.target:
            return rollouts
        task_id = strategy.choose()
        p = 1.0 / (1.0 + math.exp(-settings.slope * (theta - bank.difficulty(task_id))))
        successes = int(outcome_rng.binomial(settings.group, p))
        rollouts += settings.group
        q = successes / settings.group
        theta += settings.lr * q * (1.0 - q)
        strategy.feedback(task_id, successes, settings.group)
    return settings.budget


STRATEGIES: tuple[str, ...] = ("uniform", "fixed_band", "level_up", "ours")


def run_curriculum_bench(
    seeds: int = 10,
    *,
    strategies: Sequence[str] = STRATEGIES,
    settings: SimSettings | None = None,
    config: CurriculumConfig | None = None,
) -> dict[str, dict[str, Any]]:
    """Run every strategy on ``seeds`` seeds.

    Returns ``{strategy: {"rollouts": [per seed], "median": float, "reached": int}}``.
    """
    settings = settings or SimSettings()
    results: dict[str, dict[str, Any]] = {}
    for name in strategies:
        runs = [simulate(name, seed, settings, config) for seed in range(seeds)]
        results[name] = {
            "rollouts": runs,
            "median": float(np.median(runs)),
            "reached": sum(r < settings.budget for r in runs),
        }
    return results


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    from rich.console import Console
    from rich.table import Table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    settings = SimSettings()
    start = time.perf_counter()
    results = run_curriculum_bench(args.seeds, settings=settings)
    elapsed = time.perf_counter() - start
    ours = results["ours"]["median"]
    table = Table(
        title=(
            f"Rollouts to held-out pass@{settings.k} >= {settings.target} "
            f"(median of {args.seeds} seeds, budget {settings.budget})"
        )
    )
    for column in ("curriculum", "median rollouts", "reached", "ours saves"):
        table.add_column(column, justify="right" if column != "curriculum" else "left")
    for name, row in results.items():
        saving = (
            ""
            if name == "ours"
            else f"{1 - ours / row['median']:.0%} ({row['median'] / ours:.2f}x)"
        )
        table.add_row(name, f"{row['median']:.0f}", f"{row['reached']}/{args.seeds}", saving)
    console = Console()
    console.print(table)
    console.print(f"[dim]{elapsed:.1f} s[/dim]")
    return results


if __name__ == "__main__":
    main()
