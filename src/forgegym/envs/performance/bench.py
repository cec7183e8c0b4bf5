"""Benchmark: grading one completion end to end, warm fork-server pool vs subprocesses.

``forgegym bench --env Forge/Performance-v0`` calls :func:`run_bench`. Each measurement
is a full :meth:`~forgegym.envs.code_env.CodeEnv.grade_completions` call on one
reference completion: parse, static gates, hidden correctness traces and the measured
runs (3 sizes x 3 repetitions x null/reference/candidate, each a fresh child), scoring.
Times are wall-clock medians per completion; nothing asserts them, the table reports
the ratio against running every job as a plain fresh ``python`` subprocess.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table

__all__ = ["BenchResult", "run_bench"]


@dataclass
class BenchResult:
    """Per-completion grading times (seconds) for each runner, and their ratio."""

    n: int
    jobs_per_completion: int = 0
    times: dict[str, list[float]] = field(default_factory=dict)
    successes: dict[str, int] = field(default_factory=dict)

    def median(self, runner: str) -> float:
        return statistics.median(self.times[runner])

    @property
    def speedup(self) -> float:
        """Subprocess median / fork-server median."""
        return self.median("subprocess") / self.median("forkserver")

    def __rich__(self) -> Table:
        table = Table(
            title=f"Forge/Performance-v0: grade one completion end to end (n={self.n}, "
            f"{self.jobs_per_completion} sandbox runs each)"
        )
        table.add_column("runner")
        table.add_column("median s", justify="right")
        table.add_column("mean s", justify="right")
        table.add_column("min s", justify="right")
        table.add_column("solved", justify="right")
        for name, values in self.times.items():
            table.add_row(
                name,
                f"{statistics.median(values):.2f}",
                f"{statistics.fmean(values):.2f}",
                f"{min(values):.2f}",
                f"{self.successes.get(name, 0)}/{len(values)}",
            )
        table.caption = f"speedup (subprocess / forkserver): {self.speedup:.1f}x"
        return table

    def __str__(self) -> str:
        parts = [f"{k}: median {self.median(k):.2f}s" for k in self.times]
        return f"performance bench n={self.n}: " + ", ".join(parts) + f"; {self.speedup:.1f}x"


def run_bench(n: int = 3, *, seed: int = 0, show: bool = True) -> BenchResult:
    """Grade ``n`` reference completions (distinct tasks) with each runner, one at a time."""
    from forgegym.envs.performance.env import PerformanceEnv
    from forgegym.envs.performance.grader import PerformanceGrader
    from forgegym.family import get_family
    from forgegym.sandbox.runners import ForkServerRunner, SubprocessRunner

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    result = BenchResult(n=n)
    family_reference = get_family("performance").reference_action()

    def reference(task: Any) -> str:
        text = family_reference(task)
        if text is None:  # the reference policy covers every task
            raise RuntimeError(f"no reference action for {task.task_id}")
        return text

    for name, factory in (("forkserver", ForkServerRunner), ("subprocess", SubprocessRunner)):
        runner = factory()
        env = PerformanceEnv(runner=runner, max_steps=1)
        try:
            ids = env.task_bank.task_ids(n + 1, seed=seed, difficulty=1)
            tasks = [env.task_bank.get(i) for i in ids]
            env.grade_completions(ids[0], [reference(tasks[0])])  # warm-up (pool start)
            times, solved = [], 0
            for task_id, task in zip(ids[1:], tasks[1:], strict=True):
                completion = reference(task)
                start = time.perf_counter()
                ((_, breakdown),) = env.grade_completions(task_id, [completion])
                times.append(time.perf_counter() - start)
                solved += PerformanceGrader.solved(breakdown)
            result.times[name] = times
            result.successes[name] = solved
        finally:
            env.close()
            runner.close()
    from forgegym.envs.performance.measure import SCALES

    # The fewest a correct completion needs: adaptive rounds add more (see the grader).
    result.jobs_per_completion = 2 + 3 * len(SCALES) * PerformanceGrader().repeats
    if show:
        from rich.console import Console

        Console().print(result)
    return result
