"""Benchmark: grading one completion end to end, warm fork-server pool vs subprocesses.

Any code family's ``bench`` hook can be ``functools.partial(bench_grading, env_id)``
(Bugfix's and Refactor's are). Each measurement is a
full :meth:`~forgegym.envs.code_env.CodeEnv.grade_completions` call on one reference
completion (parse, apply, static gates, materialise, hidden differential checks and
visible tests in the sandbox, lint, scoring). Times are wall-clock medians; tests never
assert them, they only report the ratio.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from rich.table import Table

__all__ = ["BenchResult", "bench_grading"]


@dataclass
class BenchResult:
    """Per-completion grading times (seconds) for each runner, and their ratio."""

    env_id: str
    n: int
    times: dict[str, list[float]] = field(default_factory=dict)

    def median(self, runner: str) -> float:
        return statistics.median(self.times[runner])

    @property
    def speedup(self) -> float:
        """Subprocess median / fork-server median."""
        return self.median("subprocess") / self.median("forkserver")

    def __rich__(self) -> Table:
        table = Table(title=f"{self.env_id}: grade one completion end to end (n={self.n})")
        table.add_column("runner")
        table.add_column("median s", justify="right")
        table.add_column("mean s", justify="right")
        table.add_column("min s", justify="right")
        for name, values in self.times.items():
            table.add_row(
                name,
                f"{statistics.median(values):.3f}",
                f"{statistics.fmean(values):.3f}",
                f"{min(values):.3f}",
            )
        table.caption = f"speedup (subprocess / forkserver): {self.speedup:.1f}x"
        return table

    def __str__(self) -> str:
        parts = [f"{k}: median {self.median(k):.3f}s" for k in self.times]
        return (
            f"{self.env_id} bench n={self.n}: "
            + ", ".join(parts)
            + f"; speedup {self.speedup:.1f}x"
        )


def bench_grading(env_id: str, n: int = 10, *, seed: int = 0, show: bool = True) -> BenchResult:
    """Grade ``n`` reference completions (distinct tasks) of ``env_id``'s family with each
    runner, one at a time.

    ``show`` prints the table (``forgegym bench --env`` relies on it); the result is
    rich-printable either way."""
    from forgegym.family import family_for_env
    from forgegym.sandbox.runners import ForkServerRunner, SubprocessRunner

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    family = family_for_env(env_id)
    env_cls = family.env_cls
    result = BenchResult(env_id=env_id, n=n)
    reference = family.reference_action()
    for name, factory in (("forkserver", ForkServerRunner), ("subprocess", SubprocessRunner)):
        runner = factory()
        env = env_cls(runner=runner, max_steps=1)  # type: ignore[call-arg]
        try:
            ids = env.task_bank.task_ids(n + 1, seed=seed)
            tasks = [env.task_bank.get(i) for i in ids]
            env.grade_completions(ids[0], [reference(tasks[0])])  # warm-up (pool start)
            times = []
            for task_id, task in zip(ids[1:], tasks[1:], strict=True):
                completion = reference(task)
                start = time.perf_counter()
                env.grade_completions(task_id, [completion])
                times.append(time.perf_counter() - start)
            result.times[name] = times
        finally:
            env.close()
            runner.close()
    if show:
        from rich.console import Console

        Console().print(result)
    return result
