"""Runner benchmark: warm fork-server pool vs. the fresh-interpreter baseline.

Reports ratios (wall times depend on the machine); ``forgegym bench`` and
``benchmarks/runner.py`` call :func:`run_runner_bench`.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, Field

from forgegym.sandbox.jobs import PytestJob, PytestResult
from forgegym.sandbox.runners import ForkServerRunner, Runner, SubprocessRunner

__all__ = ["RunnerBench", "print_runner_bench", "run_runner_bench"]

BENCH_TESTS = """\
import pytest


def test_add():
    assert 1 + 1 == 2


def test_str():
    assert "forge".upper() == "FORGE"


def test_fail():
    assert sorted([3, 1, 2]) == [3, 2, 1]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n):
    assert n * 2 > n


def test_skip():
    pytest.skip("not here")
"""


class RunnerBench(BaseModel):
    """Median latencies (seconds) and the ratios that matter."""

    runs: int
    tests_per_run: int
    workers: int
    pool_median_s: float
    baseline_median_s: float
    ratio: float  # baseline / pool: how many times faster the pool is
    verdicts_identical: bool
    many_jobs: int
    sequential_s: float
    run_many_s: float
    run_many_speedup: float  # sequential / run_many on the pool
    confined: bool  # pool and baseline ran inside bubblewrap (see confinement.py)
    pool_unconfined_median_s: float | None = None  # the same runners in host mode
    baseline_unconfined_median_s: float | None = None
    # The 1-minute load average before and after the run, and the cores it had: the
    # ratios depend on them (other processes slow the pool's short runs more than the
    # baseline's long ones, and run_many cannot beat the idle cores).
    load_start: float | None = None
    load_end: float | None = None
    cores: int = Field(default_factory=lambda: os.cpu_count() or 1)

    @property
    def loaded(self) -> bool:
        """Whether the machine was busy: a load average of at least half its cores."""
        peak = max(self.load_start or 0.0, self.load_end or 0.0)
        return peak >= self.cores / 2

    def load_text(self) -> str:
        """``load average 3.1 -> 2.8 on 2 cores`` (or ``unknown`` where the OS has none)."""
        if self.load_start is None or self.load_end is None:
            return f"load average unknown, {self.cores} cores"
        return f"load average {self.load_start:.1f} -> {self.load_end:.1f} on {self.cores} cores"

    @property
    def pool_confinement_cost_s(self) -> float | None:
        """Per-run cost of the confinement on the pool (confined - host mode)."""
        if self.pool_unconfined_median_s is None:
            return None
        return self.pool_median_s - self.pool_unconfined_median_s

    @property
    def baseline_confinement_cost_s(self) -> float | None:
        if self.baseline_unconfined_median_s is None:
            return None
        return self.baseline_median_s - self.baseline_unconfined_median_s


def _timed(runner: Runner, job: PytestJob, n: int) -> tuple[list[float], list[PytestResult]]:
    times: list[float] = []
    results: list[PytestResult] = []
    for _ in range(n):
        start = time.perf_counter()
        res = runner.run(job)
        times.append(time.perf_counter() - start)
        assert isinstance(res, PytestResult)
        results.append(res)
    return times, results


def run_runner_bench(
    runs: int = 30, many: int = 16, workers: int | None = None, *, unconfined: bool = True
) -> RunnerBench:
    """Run a 7-test file ``runs`` times on each runner, then ``many`` jobs one by one and
    with ``run_many`` on the pool. With ``unconfined`` (and where the confinement is
    active) both runners are also timed in host mode, to report the confinement's cost."""
    load_start = _load_average()
    with (
        tempfile.TemporaryDirectory(prefix="forgegym-bench-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        ws = Path(tmp)
        (ws / "test_bench.py").write_text(BENCH_TESTS)
        job = PytestJob(workdir=str(ws), targets=["test_bench.py"])
        pool = stack.enter_context(ForkServerRunner(workers=workers))
        base = stack.enter_context(SubprocessRunner(workers=workers))
        confined = pool.confined and base.confined
        runners: dict[str, Runner] = {"pool": pool, "base": base}
        if unconfined and confined:
            runners["pool0"] = stack.enter_context(ForkServerRunner(workers=workers, confine=False))
            runners["base0"] = stack.enter_context(SubprocessRunner(workers=workers, confine=False))
        for runner in runners.values():
            if isinstance(runner, ForkServerRunner):
                runner.warm()
                runner.run(job)  # first fork of each zygote touches lazily-built state
        # Interleaved, one run of each per round: a busy machine slows all of them alike.
        times: dict[str, list[float]] = {name: [] for name in runners}
        results: list[PytestResult] = []
        for _ in range(runs):
            for name, runner in runners.items():
                t, r = _timed(runner, job, 1)
                times[name] += t
                results += r
        verdicts = {tuple(sorted(r.verdicts.items())) for r in results}
        statuses = {r.status for r in results}
        start = time.perf_counter()
        for _ in range(many):
            pool.run(job)
        sequential = time.perf_counter() - start
        start = time.perf_counter()
        pool.run_many([job] * many)
        concurrent = time.perf_counter() - start
        n_workers = pool.workers
        pool_t, base_t = times["pool"], times["base"]
        pool_plain = statistics.median(times["pool0"]) if "pool0" in times else None
        base_plain = statistics.median(times["base0"]) if "base0" in times else None
        tests = len(results[0].collected_ids) if results else 0
    pool_med = statistics.median(pool_t)
    base_med = statistics.median(base_t)
    return RunnerBench(
        runs=runs,
        tests_per_run=tests,
        workers=n_workers,
        pool_median_s=pool_med,
        baseline_median_s=base_med,
        ratio=base_med / pool_med if pool_med else float("inf"),
        verdicts_identical=len(verdicts) == 1 and len(statuses) == 1,
        many_jobs=many,
        sequential_s=sequential,
        run_many_s=concurrent,
        run_many_speedup=sequential / concurrent if concurrent else float("inf"),
        confined=confined,
        pool_unconfined_median_s=pool_plain,
        baseline_unconfined_median_s=base_plain,
        load_start=load_start,
        load_end=_load_average(),
    )


def _load_average() -> float | None:
    """The 1-minute load average, or None where the OS does not report one."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


IDLE_EXPECTATION = "about 14x and 1.7x on an idle 2-core machine (docs/speed.md)"
"""What the docs' runner-bench ratios are, for the comparison printed with a run."""


def print_runner_bench(bench: RunnerBench) -> None:
    """Pretty-print with rich."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"runner: {bench.tests_per_run}-test file, {bench.runs} runs each")
    table.add_column("measure")
    table.add_column("value", justify="right")
    mode = "confined (bubblewrap)" if bench.confined else "NOT confined"
    table.add_row(
        f"fork-server pool, {mode}, median per run", f"{bench.pool_median_s * 1000:.1f} ms"
    )
    table.add_row(
        f"subprocess baseline, {mode}, median per run", f"{bench.baseline_median_s * 1000:.1f} ms"
    )
    load = bench.load_text()
    table.caption = (
        f"Measured under a {load}. Expect {IDLE_EXPECTATION}; under load both ratios "
        "shrink (a newcomer's machine, busy with other jobs, gave 8.5x and 1.1x): "
        "other processes slow the pool's short runs more than the baseline's long ones, "
        "and run_many cannot use cores that are busy."
        + (" This run was under load: rerun on an idle machine to compare." if bench.loaded else "")
    )
    table.add_row("baseline / pool", f"{bench.ratio:.1f}x ({load})")
    if bench.pool_unconfined_median_s is not None and bench.baseline_unconfined_median_s:
        table.add_row(
            "fork-server pool, host mode, median per run",
            f"{bench.pool_unconfined_median_s * 1000:.1f} ms",
        )
        table.add_row(
            "subprocess baseline, host mode, median per run",
            f"{bench.baseline_unconfined_median_s * 1000:.1f} ms",
        )
        table.add_row(
            "confinement cost per run: pool / baseline",
            f"{(bench.pool_confinement_cost_s or 0) * 1000:+.1f} ms / "
            f"{(bench.baseline_confinement_cost_s or 0) * 1000:+.1f} ms",
        )
        table.add_row(
            "host-mode baseline / confined pool",
            f"{bench.baseline_unconfined_median_s / bench.pool_median_s:.1f}x",
        )
    table.add_row("per-test verdicts identical", "yes" if bench.verdicts_identical else "NO")
    table.add_row(
        f"run_many({bench.many_jobs}) speedup vs one by one ({bench.workers} workers)",
        f"{bench.run_many_speedup:.2f}x ({load})",
    )
    Console().print(table)
