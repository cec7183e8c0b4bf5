"""What ``forgegym bench --throughput`` measured (:class:`ThroughputResult`: one
:class:`ThroughputRow` per measurement) and the figures and tables made of it: the
per-family summary, the per-measurement detail and the real bank's comparison with the
plain-pytest baseline (:mod:`forgegym.bench.throughput` says what each figure means)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from rich.console import Group
from rich.table import Table

__all__ = ["GRPO_STEP", "BaselineLine", "FamilySummary", "ThroughputResult", "ThroughputRow"]

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
    #: Completions of the batch this row samples (plain rows measured on a subsample,
    #: ``bench_throughput(plain_per_task=...)``); 0: the row graded the batch itself.
    sample_of: int = 0

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

    def line(self) -> str:
        """One line of this row's headline figures (printed as each row finishes, so an
        interrupted run keeps what it measured)."""
        path = self.kind if self.optimised or self.kind == "plain" else "reference"
        sample = f" (sample of {self.sample_of})" if self.sample_of else ""
        return (
            f"{self.env_id} {path}: {self.workers} worker(s), {self.processes} process(es), "
            f"{self.completions} completions{sample} in {self.wall_s:.1f} s = "
            f"{self.per_s:.2f}/s, CPU {self.cpu_ms(self.total_cpu_s):.0f} ms/completion, "
            f"{self.runs} runs, load {self.load:.1f}"
        )

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


#: The GRPO step the baseline table reports (prompts x completions): measured where the
#: batch is one, else scaled from the row's figures.
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
    grpo_step_s: float  # GRPO_STEP x CPU per completion / cores (CPU-extrapolated)
    #: Wall seconds to all of a GRPO step's rewards: the row's own wall time where it
    #: graded GRPO_STEP completions, else its wall time scaled to GRPO_STEP.
    grpo_wall_s: float
    grpo_measured: bool
    sample_of: int = 0


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
            measured = best.completions == GRPO_STEP
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
                    grpo_wall_s=best.wall_s if measured else GRPO_STEP / best.per_s,
                    grpo_measured=measured,
                    sample_of=best.sample_of,
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
            f"GRPO {GRPO_PROMPTS}x{GRPO_GROUP}: s to all rewards (wall)",
            f"GRPO {GRPO_PROMPTS}x{GRPO_GROUP} on {self.cores} cores (s, from CPU)",
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
                if line.sample_of:
                    kind += f" (sample of {line.sample_of})"
                wall = f"{line.grpo_wall_s:.0f}" + ("" if line.grpo_measured else " (scaled)")
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
                    wall,
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
            "pytest = the run). GRPO wall: the row's time to all rewards where its batch "
            f"is {GRPO_PROMPTS} x {GRPO_GROUP} (measured), else its wall time scaled to "
            f"{GRPO_STEP} completions (scaled; a plain sample: the baseline shares nothing "
            f"between completions). GRPO from CPU: {GRPO_STEP} x the row's CPU per "
            "completion / cores (extrapolated, both cores assumed busy)."
        )
        return table
