"""Grading throughput for GRPO: completions per second through the trainer's reward path.

``forgegym bench --throughput`` (and ``benchmarks/throughput.py``) grade one GRPO batch
of ``tasks`` prompts x ``group`` completions per family through
:func:`~forgegym.integrations.trl.make_reward_funcs` (what ``GRPOTrainer`` calls), with a
fork-server pool of one worker and with the default pool (one worker per usable core),
each warmed on a batch of other tasks first. It reports completions/s, parallel efficiency
(pool speedup over one worker, divided by the pool's workers) and where the time goes:
the trusted parent's phases (:mod:`forgegym.core.phases`: ``parse``, ``scratch``,
``scans``, ``lint``, ``compose``), the wall time spent waiting on sandbox jobs, and the
CPU seconds of the parent (with its ruff children) and of the sandbox jobs.

Completion mixes: ``issue`` is half reference fixes and half no-ops per group (a GRPO
group repeats itself, so grading identical completions once pays off here); ``distinct``
prefixes every completion with a different ``plan`` note, so no two completions of a
group are the same submission and every one is scored in full (code families; a family
without ``plan`` gets the ``issue`` mix; FlakyRepair still runs the jobs of one patch
once, its grader's ``execution_key``). ``optimised=False`` selects the reference
grading path (``optimised_grading=False``), so both paths are measured the same way.
Times are wall-clock on whatever else the machine runs; tests never assert them.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

__all__ = ["ThroughputResult", "ThroughputRow", "bench_throughput"]

#: Parent phases shown as columns (ms per completion, summed over threads).
PHASES: tuple[str, ...] = ("parse", "scratch", "scans", "lint", "compose")


@dataclass
class ThroughputRow:
    """One family x pool size x grading path measurement."""

    env_id: str
    workers: int
    optimised: bool
    completions: int
    wall_s: float
    phases_s: dict[str, float] = field(default_factory=dict)
    parent_cpu_s: float = 0.0
    sandbox_cpu_s: float = 0.0
    rewards: list[float] = field(default_factory=list)

    @property
    def per_s(self) -> float:
        return self.completions / self.wall_s if self.wall_s > 0 else float("inf")

    def ms(self, name: str) -> float:
        """Milliseconds of ``name`` per completion."""
        return 1000.0 * self.phases_s.get(name, 0.0) / max(1, self.completions)


@dataclass
class ThroughputResult:
    """Every row, plus the machine's state while measuring."""

    rows: list[ThroughputRow]
    cores: int
    tasks: int
    group: int
    mix: str
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def row(self, env_id: str, workers: int, optimised: bool) -> ThroughputRow | None:
        for row in self.rows:
            if (row.env_id, row.workers, row.optimised) == (env_id, workers, optimised):
                return row
        return None

    def efficiency(self, env_id: str, optimised: bool) -> float | None:
        """(pool completions/s / one worker's) / pool workers."""
        pool = [r for r in self.rows if r.env_id == env_id and r.optimised == optimised]
        one = next((r for r in pool if r.workers == 1), None)
        many = max(pool, key=lambda r: r.workers, default=None)
        if one is None or many is None or many.workers == 1:
            return None
        return many.per_s / one.per_s / many.workers

    def __rich__(self) -> Table:
        table = Table(
            title=f"Grading throughput: {self.tasks} tasks x {self.group} completions "
            f"({self.mix} mix), {self.cores} cores, load {self.load_before[0]:.2f} -> "
            f"{self.load_after[0]:.2f}"
        )
        for column in ("env", "path", "workers", "compl/s", "per core/s", "efficiency"):
            table.add_column(column, justify="left" if column in ("env", "path") else "right")
        for name in PHASES:
            table.add_column(f"{name} ms", justify="right")
        for column in ("sandbox wait ms", "parent CPU ms", "sandbox CPU ms"):
            table.add_column(column, justify="right")
        for row in self.rows:
            eff = self.efficiency(row.env_id, row.optimised) if row.workers > 1 else None
            table.add_row(
                row.env_id.removeprefix("Forge/"),
                "optimised" if row.optimised else "reference",
                str(row.workers),
                f"{row.per_s:.2f}",
                f"{row.per_s / row.workers:.2f}",
                "" if eff is None else f"{eff:.0%}",
                *(f"{row.ms(name):.1f}" for name in PHASES),
                f"{row.ms('sandbox'):.1f}",
                f"{1000 * row.parent_cpu_s / max(1, row.completions):.1f}",
                f"{1000 * row.sandbox_cpu_s / max(1, row.completions):.1f}",
            )
        notes = []
        for env_id in dict.fromkeys(r.env_id for r in self.rows):
            fast = self.row(env_id, self.cores, True)
            slow = self.row(env_id, self.cores, False)
            if fast is not None and slow is not None and self.cores > 0:
                notes.append(
                    f"{env_id.removeprefix('Forge/')}: optimised/reference "
                    f"{fast.per_s / slow.per_s:.2f}x"
                )
        table.caption = "; ".join(notes)
        return table


def _completions(family: Any, env: Any, task_ids: list[str], group: int, mix: str) -> list[str]:
    """``group`` completions per task: half reference, half no-op (``distinct``: each
    with its own leading ``plan`` note)."""
    from forgegym.policies import NOOP_ACTION

    reference = family.reference_action()
    names = {m.model_fields["action"].annotation.__args__[0] for m in env.action_set.models}
    out: list[str] = []
    for task_id in task_ids:
        task = env.task_bank.get(task_id)
        ref = reference(task)
        for i in range(group):
            text = ref if i < (group + 1) // 2 else NOOP_ACTION
            if mix == "distinct" and "plan" in names:
                text = _with_plan(text, f"attempt {i}: check the failing case first")
            out.append(text)
    return out


def _with_plan(text: str, note: str) -> str:
    """``text``'s actions with a ``plan`` note first (same edits, a different submission)."""
    from forgegym.core.actions import extract_json

    payload, error = extract_json(text)
    if error is not None:
        return text
    actions = payload if isinstance(payload, list) else [payload]
    return "```json\n" + json.dumps([{"action": "plan", "text": note}, *actions]) + "\n```"


def _measure(
    env_id: str,
    workers: int,
    optimised: bool,
    batch: tuple[list[str], list[str]],
    warm: tuple[list[str], list[str]],
) -> ThroughputRow:
    from forgegym.core.phases import recording
    from forgegym.integrations.trl import make_reward_funcs
    from forgegym.sandbox.runner import ForkServerRunner

    runner = ForkServerRunner(workers=workers)
    kwargs: dict[str, Any] = {"runner": runner}
    if not optimised:
        kwargs["optimised_grading"] = False
    try:
        (reward,) = make_reward_funcs(env_id, env_kwargs=kwargs, log_terms=False)
        ids, texts = warm
        reward([""] * len(texts), texts, ids)  # pool start, manifests, caches
        ids, texts = batch
        cpu0, kids0 = time.process_time(), os.times()
        with recording() as recorder:
            start = time.perf_counter()
            rewards = reward([""] * len(texts), texts, ids)
            wall = time.perf_counter() - start
        kids1 = os.times()
        parent_cpu = time.process_time() - cpu0
        parent_cpu += (kids1.children_user - kids0.children_user) + (
            kids1.children_system - kids0.children_system
        )
        phases = recorder.snapshot()
    finally:
        runner.close()
    return ThroughputRow(
        env_id=env_id,
        workers=workers,
        optimised=optimised,
        completions=len(texts),
        wall_s=wall,
        phases_s=phases,
        parent_cpu_s=parent_cpu,
        sandbox_cpu_s=phases.get("sandbox_cpu", 0.0),
        rewards=list(rewards),
    )


def bench_throughput(
    env_ids: list[str] | None = None,
    *,
    tasks: int = 4,
    group: int = 8,
    mix: str = "issue",
    workers: list[int] | None = None,
    reference: bool = True,
    seed: int = 0,
    show: bool = True,
) -> ThroughputResult:
    """Measure grading throughput for every registered family (or ``env_ids``).

    Args:
        env_ids: ids to measure (default: the first id of every registered family).
        tasks, group: the batch is ``tasks`` prompts x ``group`` completions.
        mix: ``"issue"`` (half reference, half no-op) or ``"distinct"`` (see the module).
        workers: pool sizes (default: 1 and every usable core).
        reference: also measure the reference (unoptimised) grading path.
        seed: selects the tasks.
        show: print the table.
    """
    from forgegym.family import families, family_for_env
    from forgegym.integrations.trl import _make_env

    for name, value in (("tasks", tasks), ("group", group)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if mix not in ("issue", "distinct"):
        raise ValueError(f"mix must be 'issue' or 'distinct', got {mix!r}")
    cores = len(os.sched_getaffinity(0))
    sizes = sorted(set(workers or [1, cores]))
    if any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in sizes):
        raise ValueError(f"workers must be ints >= 1, got {workers!r}")
    ids = env_ids or [f.env_ids[0] for f in families()]
    load_before = os.getloadavg()
    rows: list[ThroughputRow] = []
    for env_id in ids:
        family = family_for_env(env_id)
        env = _make_env(env_id, None, 1).unwrapped
        try:
            # Warm-up on other tasks, with the same mix: starts the pool and pays the
            # lazy imports and loads; the measured tasks are new to both paths.
            n_warm = min(tasks, 2)
            picked = env.task_bank.task_ids(tasks + n_warm, seed=seed)
            warm_ids, measured = picked[:n_warm], picked[n_warm:]
            batch_ids = [t for t in measured for _ in range(group)]
            batch = (batch_ids, _completions(family, env, measured, group, mix))
            warm = (
                [t for t in warm_ids for _ in range(group)],
                _completions(family, env, warm_ids, group, mix),
            )
        finally:
            env.close()
        for optimised in (True, False) if reference else (True,):
            for size in sizes:
                rows.append(_measure(env_id, size, optimised, batch, warm))
    result = ThroughputResult(
        rows=rows,
        cores=max(sizes),
        tasks=tasks,
        group=group,
        mix=mix,
        load_before=load_before,
        load_after=os.getloadavg(),
    )
    if show:
        from rich.console import Console

        Console().print(result)
    return result
