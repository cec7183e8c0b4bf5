"""Simulated-learner benchmark of task-selection curricula.

A student has one latent skill per *skill* (``theta[s]``); a task trains one skill and
has a latent difficulty ``d``; one rollout succeeds with probability
``sigmoid(a * (theta[s] - d))``. Training happens in GRPO groups of ``G`` rollouts on
one task: the group's learning signal is its empirical outcome variance ``q (1 - q)``
(``q`` = success fraction; a group whose outcomes are all equal has zero advantage,
hence no gradient) and ``theta[s]`` grows by ``lr * q (1 - q)``. We measure how many
rollouts each rule needs until the held-out pass@k reaches a target.

Learners (every parameter is drawn per seed from the ranges in :func:`draw_params`):

* ``one_skill`` — one skill, ten levels of evenly spaced difficulty;
* ``multi_skill`` — three skills whose levels are not calibrated against each other (a
  per-skill offset), partial transfer of each update to the other skills, and slow
  decay of the skills not practised;
* ``noisy`` — difficulty labels off by a level or more, plus broken tasks: some never
  solvable (``p = 0``), some always solved (``p = 1``).

Targets: held-out mean pass@k >= target for ``target`` in 0.6/0.7/0.8 and k in 1/4/8,
with a worst-skill floor (every skill's held-out pass@k >= target - 0.1), over tasks of
every level; broken tasks are not held out. One run per (learner, seed, rule) records
the first rollout count at which each (target, k) is met, so every rule runs with one
configuration for every row.

Rules (all see the same bank of levelled task ids and only outcomes):

* ``uniform`` — a uniformly random task of the bank;
* ``fixed_band`` — the seeds' rule: tasks whose measured success rate is in
  [0.20, 0.85] (unseen ones count as eligible), uniformly among eligible;
* ``level_up`` — reasoning-gym style: train at one level; go up when the mean success
  over the last 32 rollouts exceeds 0.7, down below 0.3;
* ``dapo`` — DAPO dynamic sampling (Yu et al. 2025): uniform prompts, groups whose
  outcomes are all equal are dropped from the batch and resampled; the dropped
  rollouts still count. In this learner a dropped group would have given no update
  anyway, so it costs what uniform costs: its gain in practice (full, undiluted
  batches) is an optimiser effect the simulation does not model;
* ``plr`` — prioritised level replay (Jiang et al. 2021) scored by learning progress:
  with probability 0.5 a new task, else replay a seen one by rank of its score
  (``|latest success - mean of earlier ones|``, a first visit scored by its success
  variance), temperature 0.1, mixed with staleness (rho = 0.1);
* ``ours`` — :class:`forgegym.curricula.CurriculumScheduler` with its default config;
* ``oracle`` — not a rule (it reads the latent state): every draw takes the bank task
  whose true success probability gives the largest expected signal. It bounds what any
  rule can save in this learner model.

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

__all__ = [
    "LEARNERS",
    "RULES",
    "SimBank",
    "SimLearner",
    "draw_params",
    "main",
    "run_curriculum_bench",
    "simulate",
]

LEARNERS: tuple[str, ...] = ("one_skill", "multi_skill", "noisy")
RULES: tuple[str, ...] = ("uniform", "fixed_band", "level_up", "dapo", "plr", "ours", "oracle")
BASELINES: tuple[str, ...] = ("uniform", "fixed_band", "level_up", "dapo", "plr")
TARGETS: tuple[float, ...] = (0.6, 0.7, 0.8)
KS: tuple[int, ...] = (1, 4, 8)
FLOOR_MARGIN = 0.1  # every skill must reach target - FLOOR_MARGIN
NEVER, ALWAYS = 1, 2  # broken-task kinds
WARMUP = 1_000  # rollouts before the broken-task shares are counted (RunResult.broken_shares)
BROKEN_BAR = 0.02  # after the warm-up, at most this share of draws may go to broken tasks


@dataclass(frozen=True)
class SimParams:
    """One seed's learner and bank (drawn by :func:`draw_params`)."""

    learner: str
    skills: int = 1
    levels: int = 10
    per_level: int = 200
    group: int = 8  # G, rollouts per GRPO group
    slope: float = 1.5  # the `a` of sigmoid(a (theta - d))
    lr: float = 0.04
    level_step: float = 0.8  # latent difficulty between adjacent levels
    task_noise: float = 0.4  # spread of difficulty within a level
    skill_offsets: tuple[float, ...] = (-1.0,)  # difficulty of level 0, per skill
    transfer: float = 0.0  # share of an update that reaches the other skills
    decay: float = 0.0  # per rollout, unpractised skills lose this share of their gain
    label_noise: float = 0.0  # std of the true level around the label, in levels
    never: float = 0.0  # share of never-solvable tasks
    always: float = 0.0  # share of always-solved tasks
    held_out: int = 300
    budget: int = 60_000  # rollouts before giving up


def draw_params(learner: str, seed: int, *, budget: int = 60_000) -> SimParams:
    """The learner ``learner``'s parameters for ``seed`` (varied across seeds)."""
    if learner not in LEARNERS:
        raise ValueError(f"learner: unknown learner {learner!r}")
    rng = np.random.default_rng([7, LEARNERS.index(learner), seed])
    common: dict[str, Any] = {
        "learner": learner,
        "slope": float(rng.uniform(1.2, 1.8)),
        "lr": float(rng.uniform(0.03, 0.05)),
        "level_step": float(rng.uniform(0.6, 1.0)),
        "task_noise": float(rng.uniform(0.25, 0.6)),
        "budget": budget,
    }
    if learner == "one_skill":
        return SimParams(skill_offsets=(float(rng.uniform(-1.5, -0.5)),), **common)
    if learner == "multi_skill":
        return SimParams(
            skills=3,
            skill_offsets=tuple(float(x) for x in rng.uniform(-2.0, 0.5, size=3)),
            transfer=float(rng.uniform(0.15, 0.5)),
            decay=float(rng.uniform(2e-6, 8e-6)),
            **common,
        )
    return SimParams(
        skill_offsets=(float(rng.uniform(-1.5, -0.5)),),
        label_noise=float(rng.uniform(0.6, 1.5)),
        never=float(rng.uniform(0.05, 0.15)),
        always=float(rng.uniform(0.03, 0.08)),
        **common,
    )


class SimBank:
    """A TaskBank over latent tasks: ``sim/d<label>/<index>``.

    The label is the task's difficulty *level* as the bank reports it; with label noise
    the true level differs. Each task has a hidden skill, difficulty and broken kind.
    """

    family = "sim"

    def __init__(self, params: SimParams, seed: int) -> None:
        self.params = params
        self.difficulty_levels = tuple(range(params.levels))
        rng = np.random.default_rng([11, seed, LEARNERS.index(params.learner)])
        shape = (params.levels, params.per_level)
        self.skill, self.latent = _draw_tasks(params, rng, np.arange(params.levels)[:, None], shape)
        kinds = rng.random(shape)
        self.broken = np.where(
            kinds < params.never, NEVER, np.where(kinds < params.never + params.always, ALWAYS, 0)
        )
        self._all = [
            f"sim/d{lv}/{i}" for lv in range(params.levels) for i in range(params.per_level)
        ]

    @staticmethod
    def parse(task_id: str) -> tuple[int, int]:
        try:
            _, level, index = task_id.split("/")
            return int(level[1:]), int(index)
        except ValueError:
            raise UnknownTaskError(task_id) from None

    def get(self, task_id: str) -> Task:
        level, index = self.parse(task_id)
        if not (0 <= level < self.params.levels and 0 <= index < self.params.per_level):
            raise UnknownTaskError(task_id)
        return Task(task_id=task_id, family="sim", difficulty=level, title=task_id, description="")

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        level = int(rng.integers(self.params.levels)) if difficulty is None else difficulty
        return self.get(f"sim/d{level}/{int(rng.integers(self.params.per_level))}")

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        rng = np.random.default_rng(seed)
        if difficulty is None:
            universe = self._all
        else:
            universe = [f"sim/d{difficulty}/{i}" for i in range(self.params.per_level)]
        picks = rng.choice(len(universe), size=min(n, len(universe)), replace=False)
        return [universe[int(i)] for i in picks]

    def all_ids(self) -> list[str]:
        return list(self._all)

    def is_broken(self, task_id: str) -> bool:
        level, index = self.parse(task_id)
        return bool(self.broken[level, index])


def _draw_tasks(
    params: SimParams, rng: np.random.Generator, labels: np.ndarray, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Skills and latent difficulties of tasks with level ``labels``."""
    skill = rng.integers(params.skills, size=shape)
    true_level = labels + params.label_noise * rng.standard_normal(shape)
    offsets = np.asarray(params.skill_offsets)[skill]
    latent = (
        offsets + params.level_step * true_level + params.task_noise * rng.standard_normal(shape)
    )
    return skill, latent


class SimLearner:
    """The student: per-skill ``theta``, GRPO-style updates, held-out pass@k."""

    def __init__(self, params: SimParams, bank: SimBank, seed: int) -> None:
        self.params = params
        self.bank = bank
        self.theta = np.zeros(params.skills)
        rng = np.random.default_rng([13, seed, LEARNERS.index(params.learner)])
        labels = rng.integers(params.levels, size=params.held_out)
        self.held_skill, self.held_d = _draw_tasks(params, rng, labels, (params.held_out,))
        self._skill_masks = [self.held_skill == s for s in range(params.skills)]

    def success_probability(self, task_id: str) -> float:
        level, index = self.bank.parse(task_id)
        broken = self.bank.broken[level, index]
        if broken:
            return 0.0 if broken == NEVER else 1.0
        skill = self.bank.skill[level, index]
        z = self.params.slope * (self.theta[skill] - self.bank.latent[level, index])
        return 1.0 / (1.0 + math.exp(-z))

    def all_probabilities(self) -> np.ndarray:
        z = self.params.slope * (self.theta[self.bank.skill] - self.bank.latent)
        p = 1.0 / (1.0 + np.exp(-z))
        return np.where(
            self.bank.broken == NEVER, 0.0, np.where(self.bank.broken == ALWAYS, 1.0, p)
        )

    def train(self, task_id: str, successes: int) -> None:
        level, index = self.bank.parse(task_id)
        skill = self.bank.skill[level, index]
        q = successes / self.params.group
        gain = self.params.lr * q * (1.0 - q)
        others = np.arange(self.params.skills) != skill
        if self.params.decay:
            self.theta[others] *= 1.0 - self.params.decay * self.params.group
        self.theta[others] += self.params.transfer * gain
        self.theta[skill] += gain

    def held_out(self) -> dict[int, tuple[float, float]]:
        """``{k: (mean pass@k, worst skill's mean pass@k)}`` over the held-out tasks."""
        z = self.params.slope * (self.theta[self.held_skill] - self.held_d)
        miss = 1.0 / (1.0 + np.exp(z))  # 1 - p
        out = {}
        for k in KS:
            passk = 1.0 - miss**k
            worst = min(float(passk[m].mean()) for m in self._skill_masks)
            out[k] = (float(passk.mean()), worst)
        return out


# ------------------------------------------------------------------ rules
@dataclass
class _Uniform:
    bank: SimBank
    rng: np.random.Generator
    ids: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.ids = self.bank.all_ids()

    def choose(self) -> str:
        return self.ids[int(self.rng.integers(len(self.ids)))]

    def feedback(self, task_id: str, successes: int, trials: int) -> bool:
        """Whether the learner trains on this group (DAPO drops some)."""
        return True


@dataclass
class _Dapo(_Uniform):
    def feedback(self, task_id: str, successes: int, trials: int) -> bool:
        return 0 < successes < trials  # all-equal groups are filtered out of the batch


@dataclass
class _FixedBand(_Uniform):
    low: float = 0.20
    high: float = 0.85
    stats: dict[str, list[int]] = field(default_factory=dict)
    excluded: set[str] = field(default_factory=set)

    def choose(self) -> str:
        # Rejection-sample a task whose measured rate is in band (unseen ones count).
        for _ in range(10_000):
            tid = self.ids[int(self.rng.integers(len(self.ids)))]
            if tid not in self.excluded:
                return tid
        return self.ids[int(self.rng.integers(len(self.ids)))]

    def feedback(self, task_id: str, successes: int, trials: int) -> bool:
        s = self.stats.setdefault(task_id, [0, 0])
        s[0] += successes
        s[1] += trials
        rate = s[0] / s[1]
        if self.low <= rate <= self.high:
            self.excluded.discard(task_id)
        else:
            self.excluded.add(task_id)
        return True


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
        index = int(self.rng.integers(self.bank.params.per_level))
        return f"sim/d{self.level}/{index}"

    def feedback(self, task_id: str, successes: int, trials: int) -> bool:
        self.recent.extend([1] * successes + [0] * (trials - successes))
        while len(self.recent) > self.window:
            self.recent.popleft()
        if len(self.recent) >= self.window:
            mean = sum(self.recent) / len(self.recent)
            if mean > self.up and self.level < len(self.bank.difficulty_levels) - 1:
                self.level += 1
                self.recent.clear()
            elif mean < self.down and self.level > 0:
                self.level -= 1
                self.recent.clear()
        return True


@dataclass
class _Plr(_Uniform):
    """Prioritised level replay with a learning-progress score."""

    replay_prob: float = 0.5
    beta: float = 0.1  # rank-prioritisation temperature
    rho: float = 0.1  # staleness mix
    seen: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    scores: list[float] = field(default_factory=list)
    last: list[int] = field(default_factory=list)
    outcomes: dict[str, list[float]] = field(default_factory=dict)
    step: int = 0

    def choose(self) -> str:
        if self.seen and (len(self.seen) == len(self.ids) or self.rng.random() < self.replay_prob):
            scores = np.asarray(self.scores)
            ranks = np.empty(len(scores))
            ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
            h = ranks ** (-1.0 / self.beta)
            p_score = h / h.sum()
            age = self.step - np.asarray(self.last, dtype=float)
            p_stale = age / age.sum() if age.sum() > 0 else np.full(len(age), 1 / len(age))
            p = (1 - self.rho) * p_score + self.rho * p_stale
            return self.seen[int(self.rng.choice(len(self.seen), p=p))]
        while True:  # a task not seen yet
            tid = self.ids[int(self.rng.integers(len(self.ids)))]
            if tid not in self.index:
                return tid

    def feedback(self, task_id: str, successes: int, trials: int) -> bool:
        self.step += 1
        q = successes / trials
        history = self.outcomes.setdefault(task_id, [])
        score = q * (1 - q) if not history else abs(q - float(np.mean(history)))
        history.append(q)
        if task_id not in self.index:
            self.index[task_id] = len(self.seen)
            self.seen.append(task_id)
            self.scores.append(score)
            self.last.append(self.step)
        else:
            j = self.index[task_id]
            self.scores[j] = score
            self.last[j] = self.step
        return True


@dataclass
class _Ours:
    bank: SimBank
    rng: np.random.Generator
    config: CurriculumConfig

    def __post_init__(self) -> None:
        self.scheduler = CurriculumScheduler(self.bank, self.config)

    def choose(self) -> str:
        return self.scheduler.next_task()

    def feedback(self, task_id: str, successes: int, trials: int) -> bool:
        self.scheduler.record(task_id, successes, trials)
        return True


@dataclass
class _Oracle:
    bank: SimBank
    learner: SimLearner

    def choose(self) -> str:
        p = self.learner.all_probabilities()
        level, index = np.unravel_index(int(np.argmax(p * (1 - p))), p.shape)
        return f"sim/d{level}/{index}"

    def feedback(self, task_id: str, successes: int, trials: int) -> bool:
        return True


@dataclass
class RunResult:
    """One run: rollouts to each (target, k) (``None``: not within budget)."""

    learner: str
    seed: int
    reached: dict[tuple[float, int], int | None]
    rollouts: int
    draws: list[str]
    probabilities: list[float] = field(default_factory=list)

    def signal_split(self) -> tuple[float, float, float, float]:
        """``(share of first draws, mean p(1-p) of first draws, of repeats, of all)``.

        ``p(1-p)`` is the GRPO signal a draw could give (the learner's gain is
        proportional to it); the oracle gets 0.25 on every draw. A rule loses to the
        oracle where its first draws (tasks it knows nothing about but their level)
        or its repeats fall short. Needs ``keep_draws``.
        """
        if not self.probabilities:
            return (math.nan,) * 4
        p = np.asarray(self.probabilities)
        value = p * (1.0 - p)
        seen: set[str] = set()
        first = np.zeros(len(self.draws), dtype=bool)
        for n, task_id in enumerate(self.draws):
            first[n] = task_id not in seen
            seen.add(task_id)
        repeat = value[~first].mean() if (~first).any() else math.nan
        return float(first.mean()), float(value[first].mean()), float(repeat), float(value.mean())

    def broken_shares(self, warmup: int = WARMUP) -> tuple[float, float]:
        """Shares of the draws after ``warmup`` rollouts that went to broken tasks.

        Returns ``(after the warm-up, all draws after warmup rollouts)``. The warm-up is
        the run's first ``warmup`` rollouts (before them the level prior has no data)
        and, for each task, its first group: no rule that is not told which tasks are
        broken can tell a never-solvable task from a hard one, or an always-solved task
        from an easy one, before drawing it once, so that first group is how it finds
        out; every later draw of a broken task is waste. The second number counts the
        first groups too.
        """
        bank = SimBank(draw_params(self.learner, self.seed), self.seed)
        group = bank.params.group
        seen: set[str] = set()
        after = repeat = broken = 0
        for n, task_id in enumerate(self.draws):
            first = task_id not in seen
            seen.add(task_id)
            if n * group < warmup:
                continue
            after += 1
            if bank.is_broken(task_id):
                broken += 1
                repeat += not first
        return (repeat / after, broken / after) if after else (0.0, 0.0)


def simulate(
    learner: str,
    rule: str,
    seed: int,
    *,
    config: CurriculumConfig | None = None,
    budget: int = 60_000,
    keep_draws: bool = False,
) -> RunResult:
    """Run ``rule`` on ``learner``'s seed ``seed`` until every target is met or the budget."""
    params = draw_params(learner, seed, budget=budget)
    bank = SimBank(params, seed)
    student = SimLearner(params, bank, seed)
    rng = np.random.default_rng([17, seed])
    strategies: dict[str, Any] = {
        "uniform": lambda: _Uniform(bank, rng),
        "dapo": lambda: _Dapo(bank, rng),
        "fixed_band": lambda: _FixedBand(bank, rng),
        "level_up": lambda: _LevelUp(bank, rng),
        "plr": lambda: _Plr(bank, rng),
        "ours": lambda: _Ours(
            bank, rng, (config or CurriculumConfig()).model_copy(update={"seed": seed})
        ),
        "oracle": lambda: _Oracle(bank, student),
    }
    if rule not in strategies:
        raise ValueError(f"rule: unknown rule {rule!r}")
    strategy = strategies[rule]()
    outcome_rng = np.random.default_rng([19, seed])
    reached: dict[tuple[float, int], int | None] = {(t, k): None for t in TARGETS for k in KS}
    draws: list[str] = []
    probabilities: list[float] = []
    rollouts = 0
    while True:
        scores = student.held_out()
        for (target, k), value in reached.items():
            if value is None:
                mean, worst = scores[k]
                if mean >= target and worst >= target - FLOOR_MARGIN:
                    reached[target, k] = rollouts
        if all(v is not None for v in reached.values()) or rollouts >= params.budget:
            return RunResult(learner, seed, reached, rollouts, draws, probabilities)
        task_id = strategy.choose()
        p = student.success_probability(task_id)
        if keep_draws:
            draws.append(task_id)
            probabilities.append(p)
        successes = int(outcome_rng.binomial(params.group, p))
        rollouts += params.group
        if strategy.feedback(task_id, successes, params.group):
            student.train(task_id, successes)


def _simulate_job(job: tuple[str, str, int, CurriculumConfig | None, int, bool]) -> RunResult:
    learner, rule, seed, config, budget, keep_draws = job
    return simulate(learner, rule, seed, config=config, budget=budget, keep_draws=keep_draws)


def run_curriculum_bench(
    seeds: int = 10,
    *,
    learners: Sequence[str] = LEARNERS,
    rules: Sequence[str] = RULES,
    config: CurriculumConfig | None = None,
    budget: int = 60_000,
    first_seed: int = 0,
    keep_draws: bool = False,
    jobs: int = 1,
) -> dict[str, dict[str, list[RunResult]]]:
    """``{learner: {rule: [RunResult per seed]}}`` (``jobs`` > 1: that many processes)."""
    plan = [
        (learner, rule, seed, config, budget, keep_draws)
        for learner in learners
        for rule in rules
        for seed in range(first_seed, first_seed + seeds)
    ]
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            runs = list(pool.map(_simulate_job, plan, chunksize=4))
    else:
        runs = [_simulate_job(job) for job in plan]
    results: dict[str, dict[str, list[RunResult]]] = {}
    for job, run in zip(plan, runs, strict=True):
        results.setdefault(job[0], {}).setdefault(job[1], []).append(run)
    return results


def median_rollouts(runs: Sequence[RunResult], target: float, k: int, budget: int) -> float:
    """Median over seeds; a run that never reached counts as ``inf``."""
    values = [r.reached[target, k] for r in runs]
    return float(np.median([math.inf if v is None else v for v in values]))


def table_rows(results: dict[str, dict[str, list[RunResult]]], budget: int) -> list[dict[str, Any]]:
    """One row per learner x target x k: medians per rule, best baseline, saving."""
    rows = []
    for learner, by_rule in results.items():
        for target in TARGETS:
            for k in KS:
                medians = {
                    rule: median_rollouts(runs, target, k, budget) for rule, runs in by_rule.items()
                }
                baselines = {r: m for r, m in medians.items() if r in BASELINES}
                best = min(baselines, key=lambda r: baselines[r]) if baselines else None
                row: dict[str, Any] = {
                    "learner": learner,
                    "target": target,
                    "k": k,
                    "medians": medians,
                    "best_baseline": best,
                }
                if best and "ours" in medians and math.isfinite(baselines[best]):
                    row["saving"] = 1.0 - medians["ours"] / baselines[best]
                    if "oracle" in medians:
                        row["oracle_saving"] = 1.0 - medians["oracle"] / baselines[best]
                rows.append(row)
    return rows


def _why(row: dict[str, Any]) -> str:
    """Why a row misses the 20% bar: a bound (even the oracle can't) or a shortfall."""
    saving = row.get("saving")
    if saving is None:
        return ""
    if saving >= 0.20:
        return "ok"
    oracle = row.get("oracle_saving")
    if oracle is not None and oracle < 0.25:
        return f"bound: even the oracle saves only {oracle:.0%}"
    gap = "" if oracle is None else f" (the oracle saves {oracle:.0%})"
    return f"short of 20%{gap}"


def closing_notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per learner: the range of savings, and why the rows under 20% are (bound or not)."""
    notes = []
    for learner in dict.fromkeys(row["learner"] for row in rows):
        mine = [row for row in rows if row["learner"] == learner and "saving" in row]
        if not mine:
            continue
        savings = [row["saving"] for row in mine]
        short = [row for row in mine if row["saving"] < 0.20]
        line = (
            f"{learner}: ours saves {min(savings):.0%}-{max(savings):.0%} against the best baseline"
        )
        if not short:
            line += f" (all {len(mine)} rows >= 20%)"
        else:
            bound = [row for row in short if row.get("oracle_saving", 1.0) < 0.25]
            oracle = [row["oracle_saving"] for row in short if "oracle_saving" in row]
            line += f"; {len(short)} of {len(mine)} rows under 20%"
            if oracle:
                line += f", where the oracle saves {min(oracle):.0%}-{max(oracle):.0%}"
            if len(bound) == len(short):
                line += (
                    ": the bound, not the rule (a rule that reads the learner's true state gains "
                    "little over training at the level where the learner is)"
                )
            else:
                line += ": short of the bar"
        notes.append(line)
    return notes


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    from rich.console import Console
    from rich.table import Table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=60_000)
    parser.add_argument(
        "--quick", action="store_true", help="2 seeds, small budget (a smoke run for tests)"
    )
    parser.add_argument("--learners", nargs="+", choices=LEARNERS, default=list(LEARNERS))
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = parser.parse_args(argv)
    seeds, budget = (2, 8_000) if args.quick else (args.seeds, args.budget)
    start = time.perf_counter()
    results = run_curriculum_bench(
        seeds,
        learners=args.learners,
        budget=budget,
        first_seed=args.first_seed,
        keep_draws=True,
        jobs=args.jobs,
    )
    elapsed = time.perf_counter() - start
    rows = table_rows(results, budget)
    table = Table(
        title=(
            f"Median rollouts to held-out pass@k >= target with every skill >= target - "
            f"{FLOOR_MARGIN} ({seeds} seeds, budget {budget}; '-' = median not reached)"
        )
    )
    rules = [r for r in RULES if any(r in row["medians"] for row in rows)]
    for column in ("learner", "target", "k", *rules, "best baseline", "ours saves", "note"):
        table.add_column(column, justify="left" if column in ("learner", "note") else "right")
    for row in rows:
        cells = [
            f"{row['medians'][r]:.0f}" if math.isfinite(row["medians"][r]) else "-" for r in rules
        ]
        saving = row.get("saving")
        table.add_row(
            row["learner"],
            f"{row['target']:.1f}",
            str(row["k"]),
            *cells,
            row["best_baseline"] or "",
            "" if saving is None else f"{saving:.0%}",
            _why(row),
        )
    console = Console(width=200)
    console.print(table)
    if "noisy" in results:
        broken = Table(
            title=f"noisy learner: share of draws that go to broken tasks (never or always solved) after "
            f"the warm-up (the first {WARMUP:,} rollouts and each task's first group, which is "
            f"how a rule finds out), median over seeds; bar {BROKEN_BAR:.0%}"
        )
        for column in ("rule", "after the warm-up", f"< {BROKEN_BAR:.0%}", "counting first groups"):
            broken.add_column(column, justify="left" if column == "rule" else "right")
        for rule, runs in results["noisy"].items():
            shares = np.median(np.array([run.broken_shares() for run in runs]), axis=0)
            met = "yes" if shares[0] < BROKEN_BAR else "no"
            broken.add_row(rule, f"{shares[0]:.1%}", met, f"{shares[1]:.1%}")
        console.print(broken)
    signal = Table(
        title="Why rows fall short: GRPO signal E\\[p(1-p)] per draw (max 0.25), split into "
        "first draws of a task (exploration) and repeat draws (median over seeds)"
    )
    for column in ("learner", "rule", "first draws", "signal, first", "signal, repeat", "all"):
        signal.add_column(column, justify="left" if column in ("learner", "rule") else "right")
    for learner, by_rule in results.items():
        for rule in ("level_up", "ours", "oracle"):
            if rule not in by_rule:
                continue
            split = np.array([run.signal_split() for run in by_rule[rule]])
            first, v_first, v_repeat, v_all = np.nanmedian(split, axis=0)
            signal.add_row(
                learner, rule, f"{first:.0%}", f"{v_first:.3f}", f"{v_repeat:.3f}", f"{v_all:.3f}"
            )
    console.print(signal)
    for line in closing_notes(rows):
        console.print(line)
    console.print(f"[dim]{elapsed:.1f} s[/dim]")
    return rows


if __name__ == "__main__":
    main()
