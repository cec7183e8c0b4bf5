"""Grading throughput for GRPO: completions per second through the trainer's reward path.

``forgegym bench --throughput`` (and ``benchmarks/throughput.py``) grade one GRPO batch
of ``tasks`` prompts x ``group`` completions per registered family through
:func:`~forgegym.integrations.trl.make_reward_funcs` (what ``GRPOTrainer`` calls), with a
fork-server pool of one worker and with the default pool (one worker per usable core),
on the optimised and on the reference grading path (``optimised_grading=False``), and,
on the optimised path, with one grading process per core, each with a one-worker pool
(``make_reward_funcs(grading_processes=N)``, :mod:`forgegym.integrations.sharded`): the
parent-side work then runs on every core too.

Every measurement runs in a fresh Python process, warmed first on a fix and a no-op of
as many other tasks (imports, pool start, the family's data, lazily loaded scorers):
the process-wide parse, scan and lint caches of one measurement cannot speed up the
next, and the CPU accounting is the measured batch's alone. With grading processes,
:class:`~forgegym.integrations.sharded.ShardedGrading` starts every process and its sandbox
pool before the first batch (a pool started lazily in the measured batch cost
Oversight ~0.5 s per process, 50x its grading), and the warm-up batch reaches each
process. One- and many-worker runs alternate ``repeats`` times.

The default batch is 16 tasks x 8 completions (128), the issue's measurement and a
plausible GRPO step's share of one machine: with 4 x 8 a fast family's batch
(Oversight: 32 completions in ~15 ms) is shorter than the scheduler's noise on a shared
machine, and a 4-task batch on 2 processes is two tasks each, so one slow task decides
the wall time. A 128-completion batch of the slowest family (Performance, reference
path) takes a few minutes on 2 cores; ``--tasks 4`` is the quick check.

Two kinds of figures, reported apart:

* **wall-clock** (noisy on a shared machine): completions/s, the best of the repeats,
  and the parallel efficiency ``(pool completions/s / one worker's) / workers``.
* **CPU** (robust to other load): per completion, the parent's own CPU (``getrusage``
  of the grading process: parsing, scans, composing, talking to the pool), the CPU of
  the children it ran and reaped (ruff), and the sandbox pool's CPU (every live process
  under the parent, from ``/proc``: zygotes, their supervisors and the jobs they reaped,
  which includes pool overhead beyond the jobs' own rusage, shown as ``job CPU``). The
  parent's own CPU is serial (one interpreter); the rest runs in parallel processes. By
  Amdahl's law the efficiency on ``N`` cores is then at most ``(P + C) / (N*P + C)``
  (``P`` the parent's CPU, ``C`` the rest): the CPU-implied efficiency, given for the
  pool's size and for 16 cores. Per-core throughput is ``1 / (P + C)``. With grading
  processes the parent only dispatches, and the grading processes' own CPU (the work the
  parent does in one process) is a column of its own, apart from their sandbox pools'
  (under ``pool``) and the ruff runs they reap (under ``ruff``), so the rows compare
  like for like: Oversight's ~1 ms per completion is about half grading-process work
  and half sandbox pool in both layouts, not twice the CPU with processes.

Completion mixes: ``issue`` is half reference fixes and half no-ops per group (a GRPO
group repeats itself, so grading identical completions once pays off here); ``distinct``
prefixes every completion with a different ``plan`` note, so no two completions of a
group are the same submission and every one is scored in full (code families; a family
without ``plan`` gets the ``issue`` mix; FlakyRepair still runs the jobs of one patch
once, its grader's ``execution_key``).

Timed families (``Family.reward_tolerance > 0``: Performance) measure the candidate's
CPU time against the reference's, interleaved in the same batch, per job (rusage of the
job's process tree), so running jobs side by side inflates both alike. The bench checks
that each family's rewards agree across every row (one worker vs the pool, optimised vs
reference): exactly, or within the family's tolerance for timed ones, with the same
solved verdicts; the summary shows the largest difference. Tests never assert times.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.console import Group
from rich.table import Table

__all__ = ["ThroughputResult", "ThroughputRow", "bench_throughput"]

#: Parent phases shown as columns (ms per completion, summed over threads).
PHASES: tuple[str, ...] = ("parse", "scratch", "scans", "lint", "compose")
#: Cores of the larger machine the CPU-implied efficiency is also projected to.
PROJECTED_CORES = 16


@dataclass
class ThroughputRow:
    """One family x pool size x grading path x repeat measurement (times in seconds)."""

    env_id: str
    workers: int
    optimised: bool
    completions: int
    wall_s: float
    phases_s: dict[str, float] = field(default_factory=dict)
    parent_cpu_s: float = 0.0  # the grading process itself (serial)
    children_cpu_s: float = 0.0  # processes it ran and reaped (ruff)
    pool_cpu_s: float = 0.0  # the sandbox pool's process trees (zygotes, jobs)
    grading_cpu_s: float = 0.0  # grading processes' own CPU (processes > 1; else 0)
    job_cpu_s: float = 0.0  # the jobs' own rusage, as the runner reports it
    rewards: list[float] = field(default_factory=list)
    wins: list[int] = field(default_factory=list)  # solved completions per task
    load: float = 0.0
    repeat: int = 0
    processes: int = 1  # grading processes (make_reward_funcs' grading_processes)
    #: "warm" (warmed up first), "cold" (a fresh process, nothing materialised: the
    #: batch builds its tasks, projects and pool) or "plain" (the baseline a user
    #: without forgegym writes: a fresh copy and ``python -m pytest`` per completion).
    kind: str = "warm"
    tests_s: float = 0.0  # the test bodies' own time, summed over the runs (repo tasks)
    runs: int = 0  # sandbox (or plain pytest) runs the batch took
    start_s: float = 0.0  # zygote pool start before the batch (warm rows)

    @property
    def per_s(self) -> float:
        return self.completions / self.wall_s if self.wall_s > 0 else float("inf")

    def ms(self, name: str) -> float:
        """Milliseconds of phase ``name`` per completion."""
        return 1000.0 * self.phases_s.get(name, 0.0) / max(1, self.completions)

    def cpu_ms(self, seconds: float) -> float:
        return 1000.0 * seconds / max(1, self.completions)

    @property
    def total_cpu_s(self) -> float:
        return self.parent_cpu_s + self.grading_cpu_s + self.children_cpu_s + self.pool_cpu_s

    def amdahl(self, cores: int) -> float | None:
        """CPU-implied efficiency on ``cores``: parent CPU serial, the rest parallel."""
        serial = self.parent_cpu_s
        rest = self.grading_cpu_s + self.children_cpu_s + self.pool_cpu_s
        if serial + rest <= 0:
            return None
        return (serial + rest) / (cores * serial + rest)


@dataclass
class FamilySummary:
    """The per-family figures of the summary table."""

    env_id: str
    one_per_s: float | None
    pool_per_s: float | None
    workers: int
    wall_efficiency: float | None
    cpu_efficiency: float | None
    cpu_efficiency_projected: float | None
    cpu_ms: float | None
    reference_cpu_ms: float | None
    parent_ms: float | None
    sandbox_ms: float | None
    max_reward_diff: float
    tolerance: float
    solved_agree: bool
    # With one grading process per core (make_reward_funcs(grading_processes=N)):
    sharded_per_s: float | None = None
    sharded_wall_efficiency: float | None = None
    sharded_cpu_efficiency: float | None = None
    sharded_cpu_efficiency_projected: float | None = None
    sharded_parent_ms: float | None = None
    gain: float | None = None  # reference / optimised CPU per completion (one process)

    @property
    def cpu_ratio(self) -> float | None:
        return self.gain


#: The GRPO step the baseline table extrapolates to (prompts x completions).
GRPO_PROMPTS, GRPO_GROUP = 64, 8
GRPO_STEP = GRPO_PROMPTS * GRPO_GROUP


@dataclass
class BaselineLine:
    """One row of :meth:`ThroughputResult.baseline_table`."""

    kind: str
    optimised: bool
    workers: int
    processes: int
    per_s: float
    cpu_ms: float
    wall_ratio: float | None
    cpu_ratio: float | None
    runs: int
    tests_ms: float
    phases_ms: dict[str, float]
    start_s: float
    grpo_step_s: float


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
    repeats: int = 1

    def _rows(
        self, env_id: str, workers: int, optimised: bool, processes: int = 1
    ) -> list[ThroughputRow]:
        key = (env_id, workers, optimised, processes)
        return [
            r
            for r in self.rows
            if (r.env_id, r.workers, r.optimised, r.processes) == key and r.kind == "warm"
        ]

    def row(
        self, env_id: str, workers: int, optimised: bool, processes: int = 1
    ) -> ThroughputRow | None:
        """The representative row: the fastest repeat (least disturbed by other load)."""
        rows = self._rows(env_id, workers, optimised, processes)
        return max(rows, key=lambda r: r.per_s) if rows else None

    def cpu(
        self, env_id: str, workers: int, optimised: bool, processes: int = 1
    ) -> dict[str, float] | None:
        """Median CPU ms per completion over the repeats: parent, children, pool, job."""
        rows = self._rows(env_id, workers, optimised, processes)
        if not rows:
            return None
        return {
            "parent": statistics.median(r.cpu_ms(r.parent_cpu_s) for r in rows),
            "grading": statistics.median(r.cpu_ms(r.grading_cpu_s) for r in rows),
            "children": statistics.median(r.cpu_ms(r.children_cpu_s) for r in rows),
            "pool": statistics.median(r.cpu_ms(r.pool_cpu_s) for r in rows),
            "job": statistics.median(r.cpu_ms(r.job_cpu_s) for r in rows),
            "total": statistics.median(r.cpu_ms(r.total_cpu_s) for r in rows),
        }

    def cpu_gain(self, env_id: str) -> float | None:
        """Per-core throughput gain: the reference path's median total CPU per completion
        over the optimised path's, over every one-process row (one worker and the pool)."""
        totals: dict[bool, list[float]] = {True: [], False: []}
        for r in self.rows:
            if r.env_id == env_id and r.processes == 1 and r.kind == "warm":
                totals[r.optimised].append(r.cpu_ms(r.total_cpu_s))
        if not totals[True] or not totals[False]:
            return None
        fast, slow = statistics.median(totals[True]), statistics.median(totals[False])
        return slow / fast if fast > 0 else None

    def efficiency(self, env_id: str, optimised: bool, processes: int = 1) -> float | None:
        """Wall-clock: (pool completions/s / one worker's) / pool workers (best repeats)."""
        one = self.row(env_id, 1, optimised)
        many = self.row(env_id, self.cores, optimised, processes)
        if one is None or many is None or self.cores == 1:
            return None
        return many.per_s / one.per_s / self.cores

    def cpu_efficiency(
        self, env_id: str, optimised: bool, cores: int, processes: int = 1
    ) -> float | None:
        """CPU-implied (Amdahl) efficiency on ``cores``, from the pool rows' median CPU
        (with ``processes`` grading processes their own work counts as parallel: on
        ``cores`` cores there would be as many)."""
        cpu = self.cpu(env_id, self.cores, optimised, processes) or self.cpu(env_id, 1, optimised)
        if cpu is None or cpu["total"] <= 0:
            return None
        serial = cpu["parent"]
        return cpu["total"] / (cores * serial + cpu["total"] - serial)

    def summary(self) -> list[FamilySummary]:
        from forgegym.family import family_for_env

        out = []
        for env_id in dict.fromkeys(r.env_id for r in self.rows if r.kind == "warm"):
            one, many = self.row(env_id, 1, True), self.row(env_id, self.cores, True)
            fast = self.cpu(env_id, self.cores, True) or self.cpu(env_id, 1, True)
            gain = self.cpu_gain(env_id)
            n = self.cores
            sharded = self.row(env_id, n, True, n) if n > 1 else None
            sharded_cpu = self.cpu(env_id, n, True, n) if n > 1 else None
            slow = self.cpu(env_id, self.cores, False) or self.cpu(env_id, 1, False)
            rows = [r for r in self.rows if r.env_id == env_id and r.kind != "plain"]
            base = rows[0]
            diff = max(
                (abs(a - b) for r in rows for a, b in zip(r.rewards, base.rewards, strict=True)),
                default=0.0,
            )
            out.append(
                FamilySummary(
                    env_id=env_id,
                    one_per_s=one.per_s if one else None,
                    pool_per_s=many.per_s if many and self.cores > 1 else None,
                    workers=self.cores,
                    wall_efficiency=self.efficiency(env_id, True),
                    cpu_efficiency=self.cpu_efficiency(env_id, True, self.cores),
                    cpu_efficiency_projected=self.cpu_efficiency(env_id, True, PROJECTED_CORES),
                    cpu_ms=fast["total"] if fast else None,
                    reference_cpu_ms=slow["total"] if slow else None,
                    gain=gain,
                    parent_ms=fast["parent"] if fast else None,
                    sandbox_ms=fast["children"] + fast["pool"] if fast else None,
                    max_reward_diff=diff,
                    tolerance=family_for_env(env_id).reward_tolerance,
                    solved_agree=all(r.wins == base.wins for r in rows),
                    sharded_per_s=sharded.per_s if sharded else None,
                    sharded_wall_efficiency=self.efficiency(env_id, True, n) if sharded else None,
                    sharded_cpu_efficiency=(
                        self.cpu_efficiency(env_id, True, n, n) if sharded else None
                    ),
                    sharded_cpu_efficiency_projected=(
                        self.cpu_efficiency(env_id, True, PROJECTED_CORES, n) if sharded else None
                    ),
                    sharded_parent_ms=sharded_cpu["parent"] if sharded_cpu else None,
                )
            )
        return out

    def summary_table(self) -> Table:
        table = Table(
            title=f"Grading throughput per family: {self.tasks} tasks x {self.group} "
            f"completions ({self.mix} mix), {self.cores} cores, load average "
            f"{self.load_before[0]:.1f} -> {self.load_after[0]:.1f}, best of {self.repeats}"
        )
        n = self.cores
        heads = (
            ("env", "left"),
            ("1 worker /s (wall)", "right"),
            (f"{n} workers /s (wall)", "right"),
            (f"{n} processes /s (wall)", "right"),
            ("wall eff. (1 proc. | procs)", "right"),
            (f"CPU eff. {n} cores (1 proc. | procs)", "right"),
            (f"CPU eff. {PROJECTED_CORES} cores (1 proc. | procs)", "right"),
            ("CPU ms/compl. optimised", "right"),
            ("reference", "right"),
            ("per-core gain", "right"),
            ("parent ms", "right"),
            ("sandbox+ruff ms", "right"),
            ("rewards agree", "left"),
        )
        for name, justify in heads:
            table.add_column(name, justify=justify)  # type: ignore[arg-type]

        def num(value: float | None, fmt: str) -> str:
            return "" if value is None else format(value, fmt)

        def pair(one: float | None, procs: float | None) -> str:
            return f"{num(one, '.0%') or '-'} | {num(procs, '.0%') or '-'}"

        for s in self.summary():
            agree = "yes" if s.max_reward_diff == 0 else f"max diff {s.max_reward_diff:.3f}"
            if s.tolerance and s.max_reward_diff:
                agree += f" (tolerance {s.tolerance})"
            if not s.solved_agree:
                agree += ", verdicts differ"
            table.add_row(
                s.env_id.removeprefix("Forge/"),
                num(s.one_per_s, ".2f"),
                num(s.pool_per_s, ".2f"),
                num(s.sharded_per_s, ".2f"),
                pair(s.wall_efficiency, s.sharded_wall_efficiency),
                pair(s.cpu_efficiency, s.sharded_cpu_efficiency),
                pair(s.cpu_efficiency_projected, s.sharded_cpu_efficiency_projected),
                num(s.cpu_ms, ".1f"),
                num(s.reference_cpu_ms, ".1f"),
                "" if s.cpu_ratio is None else f"{s.cpu_ratio:.1f}x",
                num(s.parent_ms, ".1f"),
                num(s.sandbox_ms, ".1f"),
                agree,
            )
        table.caption = (
            "wall: completions/s and efficiency (speedup / workers) on a shared machine, "
            "noisy. CPU (robust): median CPU per completion on the optimised path with the "
            "pool; CPU eff. = (P + C) / (N*P + C), Amdahl's bound with the grading "
            "process's own CPU P serial and its sandbox pool's and ruff's C parallel; "
            "'procs': one grading process per core (make_reward_funcs(grading_processes=N)), "
            "where P is only the dispatching parent's; per-core gain = reference CPU / "
            "optimised CPU per completion (medians over one-process rows)."
        )
        return table

    def detail_table(self) -> Table:
        table = Table(title="Per measurement: wall time, parent phases, CPU per completion")
        for column in ("env", "kind", "path", "procs", "workers", "rep", "load", "compl/s"):
            table.add_column(column, justify="left" if column in ("env", "path") else "right")
        for name in PHASES:
            table.add_column(f"{name} ms", justify="right")
        for column in (
            "sandbox wait ms",
            "parent CPU",
            "grading procs CPU",
            "ruff CPU",
            "pool CPU",
            "job CPU",
        ):
            table.add_column(column, justify="right")
        for row in self.rows:
            table.add_row(
                row.env_id.removeprefix("Forge/"),
                row.kind,
                "-" if row.kind == "plain" else "optimised" if row.optimised else "reference",
                str(row.processes),
                str(row.workers),
                str(row.repeat),
                f"{row.load:.1f}",
                f"{row.per_s:.2f}",
                *(f"{row.ms(name):.1f}" for name in PHASES),
                f"{row.ms('sandbox'):.1f}",
                f"{row.cpu_ms(row.parent_cpu_s):.1f}",
                f"{row.cpu_ms(row.grading_cpu_s):.1f}",
                f"{row.cpu_ms(row.children_cpu_s):.1f}",
                f"{row.cpu_ms(row.pool_cpu_s):.1f}",
                f"{row.cpu_ms(row.job_cpu_s):.1f}",
            )
        table.caption = (
            "phases: wall ms per completion in the parent (summed over threads); CPU: ms "
            "per completion of the parent itself (procs > 1: the dispatcher), of the grading "
            "processes themselves (procs > 1: the work the parent does with procs = 1), of "
            "ruff (run by the parent or the grading processes), of the sandbox pools and of "
            "the jobs alone (rusage; procs > 1: not reported back, 0)"
        )
        return table

    def __rich__(self) -> Group:
        tables = [self.detail_table(), self.summary_table()]
        if any(r.kind == "plain" for r in self.rows):
            tables.append(self.baseline_table())
        return Group(*tables)

    def baseline(self, env_id: str) -> list[BaselineLine]:
        """forgegym's rows against the plain-pytest baseline of the same batch: per kind
        (warm, cold) and layout (workers x processes), the best wall-clock repeat and
        the median CPU per completion, each as a ratio to the plain row with as many
        parallel processes (CPU: to the plain rows' median)."""
        rows = [r for r in self.rows if r.env_id == env_id]
        plain = [r for r in rows if r.kind == "plain"]
        if not plain:
            return []

        def total(r: ThroughputRow) -> float:
            # The jobs' own rusage where the /proc scan of the pool saw less (zygotes
            # retired within the batch take their reaped runs with them).
            return r.cpu_ms(r.total_cpu_s - r.pool_cpu_s + max(r.pool_cpu_s, r.job_cpu_s))

        plain_cpu = statistics.median(total(r) for r in plain)
        out = []
        layouts = dict.fromkeys((r.kind, r.workers, r.processes, r.optimised) for r in rows)
        for kind, workers, processes, optimised in layouts:
            group = [
                r
                for r in rows
                if (r.kind, r.workers, r.processes, r.optimised)
                == (kind, workers, processes, optimised)
            ]
            best = max(group, key=lambda r: r.per_s)
            cpu = statistics.median(total(r) for r in group)
            same = [r for r in plain if r.workers == workers] or plain
            plain_best = max(same, key=lambda r: r.per_s)
            out.append(
                BaselineLine(
                    kind=kind,
                    optimised=optimised,
                    workers=workers,
                    processes=processes,
                    per_s=best.per_s,
                    cpu_ms=cpu,
                    wall_ratio=best.per_s / plain_best.per_s if plain_best.per_s else None,
                    cpu_ratio=plain_cpu / cpu if cpu > 0 else None,
                    runs=best.runs,
                    tests_ms=best.cpu_ms(best.tests_s),
                    phases_ms={k: best.ms(k) for k in best.phases_s},
                    start_s=best.start_s,
                    grpo_step_s=GRPO_STEP * cpu / 1000.0 / self.cores,
                )
            )
        return out

    def baseline_table(self) -> Table:
        table = Table(
            title=f"Against the plain-pytest baseline (a fresh copy of the project and "
            f"`python -m pytest` of the same test files per completion), {self.tasks} tasks x "
            f"{self.group} ({self.mix} mix), {self.cores} cores, load average "
            f"{self.load_before[0]:.1f} -> {self.load_after[0]:.1f}"
        )
        heads = (
            "env",
            "kind",
            "workers x procs",
            "compl/s (wall)",
            "x plain (wall)",
            "CPU ms/compl",
            "x plain (CPU)",
            "runs",
            "tests ms/compl",
            "where the time goes (ms/compl)",
            f"GRPO {GRPO_PROMPTS}x{GRPO_GROUP} on {self.cores} cores (s, extrapolated)",
        )
        for name in heads:
            table.add_column(name, justify="left" if name in ("env", "kind") else "right")
        for env_id in dict.fromkeys(r.env_id for r in self.rows):
            for line in self.baseline(env_id):
                where = ", ".join(
                    f"{k} {v:.0f}" for k, v in sorted(line.phases_ms.items()) if v >= 0.5
                )
                if line.start_s:
                    where += f"{', ' if where else ''}pool start {line.start_s * 1000:.0f} ms/batch"
                kind = line.kind if line.optimised or line.kind == "plain" else "reference"
                table.add_row(
                    env_id.removeprefix("Forge/"),
                    kind,
                    f"{line.workers} x {line.processes}",
                    f"{line.per_s:.2f}",
                    "" if line.wall_ratio is None else f"{line.wall_ratio:.1f}x",
                    f"{line.cpu_ms:.0f}",
                    "" if line.cpu_ratio is None else f"{line.cpu_ratio:.1f}x",
                    str(line.runs),
                    f"{line.tests_ms:.0f}",
                    where,
                    f"{line.grpo_step_s:.0f}",
                )
        table.caption = (
            "CPU: the grading process(es), ruff and the sandbox (the larger of the pool's "
            "CPU seen in /proc and the jobs' own rusage); grading processes (procs > 1) "
            "report no job rusage, so their sandbox CPU is the /proc figure alone. "
            "x plain: the plain baseline's figure over this row's (wall: against the plain "
            "row with as many parallel processes; CPU: the plain rows' median CPU per "
            "completion). runs: pytest jobs (forgegym: identical completions and "
            "completions of one task with one patch share a run) or pytest processes "
            "(plain). tests: the test bodies' own time. where the time goes: wall ms per "
            "completion of the parent's phases (materialise = unpack the project, project "
            "= read it and its test imports, depenv = its dependency environment, "
            "warm_code = compile its tests for the zygotes, parse/scans/lint/compose = the "
            "parent's checks, sandbox = waiting for runs; plain: copy = the fresh copy, "
            "pytest = the run). GRPO: 512 completions x the row's CPU per completion / "
            "cores (extrapolated from the measured CPU, not measured)."
        )
        return table


def _completions(family: Any, env: Any, task_ids: list[str], group: int, mix: str) -> list[str]:
    """``group`` completions per task: half reference, half no-op (``distinct``: each
    with its own leading ``plan`` note)."""
    from forgegym.play.policies import NOOP_ACTION

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


def _same_project_warmup(bank: Any, measured: list[str], fallback: list[str]) -> list[str]:
    """Warm-up tasks for a bank of projects (one with ``entry(task_id)["project"]``, the
    real bank): another task of each measured task's project, so every grading process
    has the projects unpacked and their warm code registered before the measured batch
    (steady state: a trainer meets each project once); ``fallback`` otherwise."""
    entry = getattr(bank, "entry", None)
    if not callable(entry):
        return fallback
    chosen: list[str] = []
    taken = set(measured)
    for task_id in measured:
        project = entry(task_id)["project"]
        for other in bank.task_ids(len(bank), seed=len(chosen)):
            if other not in taken and entry(other)["project"] == project:
                chosen.append(other)
                taken.add(other)
                break
    return chosen if len(chosen) == len(measured) else fallback


def _tree_cpu(grading: frozenset[int] = frozenset()) -> tuple[float, float, float]:
    """CPU seconds of every live process under this one, in three parts: the own CPU of
    the ``grading`` processes (direct children), the CPU of the children they reaped
    (ruff), and everything else (own + reaped children: sandbox pools, zygotes, jobs)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        # fields[0] is the state (field 3); ppid is field 4, utime..cstime 14..17.
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
    me = os.getpid()
    own = reaped = rest = 0
    for pid, (self_ticks, child_ticks) in cpu.items():
        if pid in grading and parents.get(pid) == me:
            own += self_ticks
            reaped += child_ticks
            continue
        seen = pid
        for _ in range(64):
            seen = parents.get(seen, 0)
            if seen == me:
                rest += self_ticks + child_ticks
                break
            if seen <= 1:
                break
    return own / tick, reaped / tick, rest / tick


def _tree_cpu_s() -> float:
    """CPU seconds (own + reaped children) of every live process under this one."""
    return sum(_tree_cpu())


def _grading_pids() -> frozenset[int]:
    """This process's grading processes (``make_reward_funcs(grading_processes=N)``'s
    spawned workers, :mod:`forgegym.integrations.sharded`): direct children started by
    ``multiprocessing.spawn`` (not its resource tracker, not a sandbox pool)."""
    me = os.getpid()
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except (OSError, ValueError, IndexError):
            continue
        if b"multiprocessing.spawn" in cmdline:
            out.add(int(entry))
    return frozenset(out)


def _rusage_s(who: int) -> float:
    import resource

    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _measure(
    env_id: str,
    workers: int,
    optimised: bool,
    batch: tuple[list[str], list[str]],
    warm: tuple[list[str], list[str]],
    processes: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    kind: str = "warm",
) -> ThroughputRow:
    """One measurement in this process (``bench_throughput`` runs it in a fresh one).
    ``kind="cold"``: no warm-up (the batch builds its tasks and starts the pool)."""
    import resource

    from forgegym.grading.phases import recording
    from forgegym.integrations.trl import make_reward_funcs
    from forgegym.sandbox.jobs import PytestResult
    from forgegym.sandbox.runners import ForkServerRunner

    if kind == "plain":
        return _measure_plain(env_id, workers, batch, env_kwargs)
    kwargs: dict[str, Any] = dict(env_kwargs or {})
    runner = None
    ran: list[Any] = []
    if processes == 1:
        runner = ForkServerRunner(workers=workers)
        kwargs["runner"] = runner
        run = runner.run

        def counted(job: Any) -> Any:
            result = run(job)
            ran.append(result)
            return result

        runner.run = counted  # type: ignore[method-assign]
    if not optimised:
        kwargs["optimised_grading"] = False

    class _Wins:
        """Takes the reward function's per-task outcome reports (a curriculum's role)."""

        def __init__(self) -> None:
            self.wins: list[int] = []

        def record(self, task_id: str, wins: int, total: int) -> None:
            self.wins.append(int(wins))

    outcomes = _Wins()
    try:
        (reward,) = make_reward_funcs(
            env_id,
            curriculum=outcomes,  # type: ignore[arg-type]
            env_kwargs=kwargs,
            log_terms=False,
            grading_processes=processes,
            workers_per_process=max(1, workers // processes),
        )
        start_s = 0.0
        if kind != "cold":
            ids, texts = warm
            reward([""] * len(texts), texts, ids)  # imports, pool start, the family's data
            _build_tasks(env_id, env_kwargs, batch[0])
            if runner is not None:
                began = time.perf_counter()
                runner.warm()  # replaces zygotes older than the tasks' warm code
                start_s = time.perf_counter() - began
        ids, texts = batch
        outcomes.wins.clear()
        ran.clear()
        load = os.getloadavg()[0]
        # The /proc scan (a few ms) brackets the parent's own rusage, not inside it.
        grading = _grading_pids() if processes > 1 else frozenset()
        tree0 = _tree_cpu(grading)
        kids0 = _rusage_s(resource.RUSAGE_CHILDREN)
        self0 = _rusage_s(resource.RUSAGE_SELF)
        with recording() as recorder:
            start = time.perf_counter()
            rewards = reward([""] * len(texts), texts, ids)
            wall = time.perf_counter() - start
        self1 = _rusage_s(resource.RUSAGE_SELF)
        kids1 = _rusage_s(resource.RUSAGE_CHILDREN)
        tree1 = _tree_cpu(grading)
        phases = recorder.snapshot()
        reward.close()  # type: ignore[attr-defined]
    finally:
        if runner is not None:
            runner.close()
    return ThroughputRow(
        env_id=env_id,
        workers=workers,
        optimised=optimised,
        completions=len(texts),
        wall_s=wall,
        phases_s=phases,
        parent_cpu_s=self1 - self0,
        children_cpu_s=(kids1 - kids0) + max(0.0, tree1[1] - tree0[1]),
        pool_cpu_s=max(0.0, tree1[2] - tree0[2]),
        grading_cpu_s=max(0.0, tree1[0] - tree0[0]),
        job_cpu_s=phases.get("sandbox_cpu", 0.0),
        # An invalid reward (a machine fault) is None for the trainer: NaN here.
        rewards=[float("nan") if r is None else float(r) for r in rewards],
        wins=list(outcomes.wins),
        load=load,
        processes=processes,
        kind=kind,
        tests_s=sum(
            rec.duration_s for r in ran if isinstance(r, PytestResult) for rec in r.records
        ),
        # pytest runs (a real task's behaviour-check job per distinct patch is not one)
        runs=sum(isinstance(r, PytestResult) for r in ran),
        start_s=start_s,
    )


def _build_tasks(env_id: str, env_kwargs: dict[str, Any] | None, task_ids: list[str]) -> None:
    """Build the batch's tasks once in another env of this process, as a trainer's
    dataset does when it renders the prompts (a real project is then unpacked, its
    dependency environment and its warm test code ready; the reward function's own
    env still builds its tasks inside the measured batch)."""
    from forgegym.integrations.trl import _make_env

    env = _make_env(env_id, env_kwargs, 1).unwrapped
    try:
        for task_id in dict.fromkeys(task_ids):
            env.get_task(task_id)
    finally:
        env.close()


def _plain_pytest_runs(
    env: Any, batch: tuple[list[str], list[str]], keep: list[Any]
) -> list[tuple[str, Any, list[str]]]:
    """Per completion, what the plain baseline runs: the project as forgegym grades it
    (the task's files with the completion's edits, materialised by the grader), the
    task's project configuration and the test files the grader selects for it. The
    workspaces and submissions go to ``keep`` (the caller cleans them up)."""
    from forgegym.sandbox.jobs import PytestJob
    from forgegym.sandbox.workspace import Workspace

    out = []
    for task_id, text in zip(*batch, strict=True):
        task = env.get_task(task_id)
        workspace = Workspace(
            task.files,
            task.editable_files,
            creatable=task.creatable,
            data_files=task.data_files,
            on_disk=False,
        )
        keep.append(workspace)
        submission, _ = env._parse_completion(task, workspace, text, on_disk=False)
        keep.append(submission)
        jobs = [j for j in env.grader_for(task).jobs(submission) if isinstance(j, PytestJob)]
        if jobs:
            out.append((jobs[0].workdir, jobs[0].project, list(jobs[0].targets)))
        else:  # a gate fired: the plain user runs the visible tests anyway
            from forgegym.sandbox.jobs import ProjectRun

            project = ProjectRun.model_validate(task.metadata["project_run"])
            out.append((str(submission.materialise()), project, list(task.visible_test_files)))
    return out


def _plain_one(source: str, project: Any, selected: list[str]) -> tuple[float, float]:
    """One baseline completion: a fresh copy of the project (``source``: its files with
    the completion's edits), then ``python -m pytest`` of ``selected`` with the project's
    configuration, import roots and dependency environment (plugin autoload off, as in
    the sandbox). ``(copy s, pytest s)``."""
    import shutil
    import tempfile

    began = time.perf_counter()
    scratch = tempfile.mkdtemp(prefix="forgegym-plain-")
    try:
        work = os.path.join(scratch, "project")
        shutil.copytree(source, work, symlinks=True)
        copied = time.perf_counter()
        paths = [os.path.join(work, p) for p in project.import_paths] + list(project.site_dirs)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": scratch,
            "PYTHONPATH": os.pathsep.join([work, *paths]),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONHASHSEED": "0",
        }
        config = ["-c", project.config_name] if project.config_name else []
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *config,
            "-o",
            "addopts=",
            *project.addopts,
            *selected,
        ]
        subprocess.run(command, cwd=work, env=env, capture_output=True, timeout=600, check=False)
        return copied - began, time.perf_counter() - copied
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure_plain(
    env_id: str,
    workers: int,
    batch: tuple[list[str], list[str]],
    env_kwargs: dict[str, Any] | None,
) -> ThroughputRow:
    """The baseline a user without forgegym writes, on the same batch: every completion
    (none shared) gets a fresh copy of the project and a plain ``python -m pytest`` of
    the test files forgegym runs for it, ``workers`` at a time. Its CPU is the pytest
    processes' (reaped children) plus this process's own (the copies)."""
    from forgegym.integrations.trl import _make_env

    env = _make_env(env_id, env_kwargs, 1).unwrapped
    keep: list[Any] = []
    try:
        return _time_plain(env_id, workers, _plain_pytest_runs(env, batch, keep))
    finally:
        for item in reversed(keep):
            (getattr(item, "cleanup", None) or item.close)()
        env.close()


def _time_plain(env_id: str, workers: int, runs: list[tuple[str, Any, list[str]]]) -> ThroughputRow:
    import resource
    from concurrent.futures import ThreadPoolExecutor

    load = os.getloadavg()[0]
    kids0 = _rusage_s(resource.RUSAGE_CHILDREN)
    self0 = _rusage_s(resource.RUSAGE_SELF)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        timings = list(pool.map(lambda run: _plain_one(*run), runs))
    wall = time.perf_counter() - start
    self1 = _rusage_s(resource.RUSAGE_SELF)
    kids1 = _rusage_s(resource.RUSAGE_CHILDREN)
    return ThroughputRow(
        env_id=env_id,
        workers=workers,
        optimised=False,
        completions=len(runs),
        wall_s=wall,
        phases_s={
            "copy": sum(c for c, _ in timings),
            "pytest": sum(t for _, t in timings),
        },
        parent_cpu_s=self1 - self0,
        children_cpu_s=kids1 - kids0,
        load=load,
        kind="plain",
        runs=len(runs),
    )


def _measure_fresh(
    env_id: str,
    workers: int,
    optimised: bool,
    batch: tuple[list[str], list[str]],
    warm: tuple[list[str], list[str]],
    processes: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    kind: str = "warm",
) -> ThroughputRow:
    """:func:`_measure` in a fresh interpreter (no caches of earlier measurements). A
    cold measurement also gets fresh folders for unpacked real projects and their warm
    code (``FORGEGYM_REAL_DIR``): nothing materialised (the sdists and the dependency
    environments stay cached: downloads and installs are not what a batch repeats)."""
    import shutil
    import tempfile

    request = {
        "env_id": env_id,
        "workers": workers,
        "optimised": optimised,
        "batch": batch,
        "warm": warm,
        "processes": processes,
        "env_kwargs": env_kwargs,
        "kind": kind,
    }
    environ = dict(os.environ)
    scratch = tempfile.mkdtemp(prefix="forgegym-cold-") if kind == "cold" else None
    if scratch is not None:
        environ["FORGEGYM_REAL_DIR"] = scratch
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "forgegym.bench.throughput"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
            env=environ,
        )
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("ROW ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"throughput measurement of {env_id} ({workers} workers) failed "
            f"(exit {proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    return ThroughputRow(**json.loads(lines[-1][4:]))


def bench_throughput(
    env_ids: list[str] | None = None,
    *,
    tasks: int = 16,
    group: int = 8,
    mix: str = "issue",
    workers: list[int] | None = None,
    reference: bool = True,
    repeats: int = 1,
    seed: int = 0,
    show: bool = True,
    fresh_process: bool = True,
    sharded: bool = True,
    env_kwargs: dict[str, Any] | None = None,
    cold: bool | None = None,
    plain: bool | None = None,
) -> ThroughputResult:
    """Measure grading throughput for every registered family (or ``env_ids``).

    Args:
        env_ids: ids to measure (default: the first id of every registered family).
        tasks, group: the batch is ``tasks`` prompts x ``group`` completions (default
            16 x 8, the issue's measurement; see the module docstring).
        mix: ``"issue"`` (half reference, half no-op) or ``"distinct"`` (see the module).
        workers: pool sizes (default: 1 and every usable core).
        reference: also measure the reference (unoptimised) grading path.
        repeats: measurements per configuration, pool sizes alternating.
        seed: selects the tasks.
        show: print the tables.
        fresh_process: measure each configuration in a fresh interpreter (default;
            ``False`` measures in this process, where caches of earlier rows persist).
        sharded: also measure the optimised path with one grading process per worker
            of the largest pool (``make_reward_funcs(grading_processes=N)``).
        env_kwargs: ``gym.make`` keyword arguments of every env (``{"bank": "real"}``:
            the real projects' tasks).
        cold: also measure the optimised path cold: a fresh process whose batch finds
            nothing materialised (one worker and the pool, once each). Default: for
            repository tasks (a real bank) only.
        plain: also measure the plain-pytest baseline on the same batch (a fresh copy of
            the project and ``python -m pytest`` per completion; one process and one per
            core). Default: for repository tasks only.
    """
    from forgegym.family import families, family_for_env
    from forgegym.integrations.trl import _make_env

    for name, value in (("tasks", tasks), ("group", group), ("repeats", repeats)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if mix not in ("issue", "distinct"):
        raise ValueError(f"mix must be 'issue' or 'distinct', got {mix!r}")
    cores = len(os.sched_getaffinity(0))
    sizes = sorted(set(workers or [1, cores]))
    if any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in sizes):
        raise ValueError(f"workers must be ints >= 1, got {workers!r}")
    ids = env_ids or [f.env_ids[0] for f in families()]
    measure = _measure_fresh if fresh_process else _measure
    load_before = os.getloadavg()
    rows: list[ThroughputRow] = []
    for env_id in ids:
        family = family_for_env(env_id)
        env = _make_env(env_id, env_kwargs, 1).unwrapped
        try:
            # Warm-up on as many other tasks (a fix and a no-op each): imports, pool
            # start, the family's data, the lazily loaded scorers; the measured tasks
            # are new to the process.
            picked = env.task_bank.task_ids(2 * tasks, seed=seed)
            warm_ids, measured = picked[:tasks], picked[tasks:]
            warm_ids = _same_project_warmup(env.task_bank, measured, warm_ids)
            batch_ids = [t for t in measured for _ in range(group)]
            batch = (batch_ids, _completions(family, env, measured, group, mix))
            warm = (
                [t for t in warm_ids for _ in range(2)],
                _completions(family, env, warm_ids, 2, "issue"),
            )
            # A repository task (a real bank's): its hidden record is the repository kind.
            hidden = env.task_bank.get(measured[0]).hidden if measured else None
            repo = isinstance(hidden, dict) and hidden.get("kind") == "repo"
        finally:
            env.close()
        if plain if plain is not None else repo:
            for repeat in range(repeats):
                for size in sizes if repeat % 2 == 0 else sizes[::-1]:
                    row = measure(env_id, size, False, batch, warm, 1, env_kwargs, "plain")
                    row.repeat = repeat
                    rows.append(row)
        if cold if cold is not None else repo:
            for size in sizes:
                row = measure(env_id, size, True, batch, warm, 1, env_kwargs, "cold")
                rows.append(row)
        for optimised in (True, False) if reference else (True,):
            # (workers, grading processes): one worker, the pool in one process, and
            # (optimised path) one grading process per worker.
            configs = [(size, 1) for size in sizes]
            if optimised and sharded and max(sizes) > 1:
                configs.append((max(sizes), max(sizes)))
            for repeat in range(repeats):
                for size, procs in configs if repeat % 2 == 0 else configs[::-1]:
                    row = measure(env_id, size, optimised, batch, warm, procs, env_kwargs)
                    row.repeat = repeat
                    rows.append(row)
    result = ThroughputResult(
        rows=rows,
        cores=max(sizes),
        tasks=tasks,
        group=group,
        mix=mix,
        load_before=load_before,
        load_after=os.getloadavg(),
        repeats=repeats,
    )
    if show:
        from rich.console import Console

        Console().print(result)
    return result


def _child_main() -> None:
    request = json.loads(sys.stdin.read())
    row = _measure(
        request["env_id"],
        request["workers"],
        request["optimised"],
        tuple(request["batch"]),  # type: ignore[arg-type]
        tuple(request["warm"]),  # type: ignore[arg-type]
        request.get("processes", 1),
        request.get("env_kwargs"),
        request.get("kind", "warm"),
    )
    print("ROW " + json.dumps(asdict(row)), flush=True)


if __name__ == "__main__":
    _child_main()
