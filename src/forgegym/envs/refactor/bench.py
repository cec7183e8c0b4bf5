"""``forgegym bench --env Forge/Refactor-v0``: grading one completion end to end, warm
fork-server pool vs plain subprocesses (see :mod:`forgegym.grading.bench`)."""

from __future__ import annotations

from forgegym.grading.bench import BenchResult, bench_grading

__all__ = ["BenchResult", "run_bench"]


def run_bench(n: int = 10, *, seed: int = 0, show: bool = True) -> BenchResult:
    """Grade ``n`` reference completions with each runner; see :func:`bench_grading`."""
    return bench_grading("Forge/Refactor-v0", n, seed=seed, show=show)
