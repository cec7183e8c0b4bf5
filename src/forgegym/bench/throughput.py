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

This module runs the bench (:func:`bench_throughput`); one measurement is
:mod:`~forgegym.bench.throughput_measure` (the CPU accounting
:mod:`~forgegym.bench.process_cpu`), the plain-pytest baseline
:mod:`~forgegym.bench.plain_baseline`, and the rows, figures and tables
:mod:`~forgegym.bench.throughput_result`.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from forgegym.bench import throughput_measure
from forgegym.bench.throughput_measure import completions, same_project_warmup
from forgegym.bench.throughput_result import GRPO_STEP, ThroughputResult, ThroughputRow

__all__ = [
    "GRPO_STEP",
    "ThroughputResult",
    "ThroughputRow",
    "bench_throughput",
    "plain_sample",
]


def plain_sample(
    batch: tuple[list[str], list[str]], group: int, per_task: int | None
) -> tuple[list[str], list[str]]:
    """``per_task`` completions of each task's group of ``group`` in ``batch``, spread
    evenly over the group (with 2 of an ``issue`` group: its first reference fix and its
    first no-op); the whole batch when ``per_task`` is ``None`` or covers the group. The
    plain baseline shares nothing between completions: its figures per completion on
    such a sample stand for the batch (its rows say which batch they sample)."""
    if per_task is None or per_task >= group:
        return batch
    picks = sorted({(j * group) // per_task for j in range(per_task)})
    ids, texts = batch
    keep = [i for i in range(len(ids)) if i % group in picks]
    return [ids[i] for i in keep], [texts[i] for i in keep]


def _check_counts(**counts: int) -> None:
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")


def _keep(rows: list[ThroughputRow], row: ThroughputRow, show: bool) -> None:
    """Add a finished row and print it at once (stderr): a long run stopped midway keeps
    the rows it measured."""
    rows.append(row)
    if show:
        print(f"[{time.strftime('%H:%M:%S')}] {row.line()}", file=sys.stderr, flush=True)


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
    plain_per_task: int | None = None,
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
        plain_per_task: measure the plain baseline on this many completions per task
            (:func:`plain_sample`; default: all; it shares nothing between completions).
    """
    from forgegym.family import families, family_for_env
    from forgegym.integrations.trl import _make_env

    _check_counts(tasks=tasks, group=group, repeats=repeats)
    if plain_per_task is not None:
        _check_counts(plain_per_task=plain_per_task)
    if mix not in ("issue", "distinct"):
        raise ValueError(f"mix must be 'issue' or 'distinct', got {mix!r}")
    cores = len(os.sched_getaffinity(0))
    sizes = sorted(set(workers or [1, cores]))
    if any(isinstance(w, bool) or not isinstance(w, int) or w < 1 for w in sizes):
        raise ValueError(f"workers must be ints >= 1, got {workers!r}")
    ids = env_ids or [f.env_ids[0] for f in families()]
    measure = throughput_measure.measure_fresh if fresh_process else throughput_measure.measure
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
            warm_ids = same_project_warmup(env.task_bank, measured, warm_ids)
            batch_ids = [t for t in measured for _ in range(group)]
            batch = (batch_ids, completions(family, env, measured, group, mix))
            warm = (
                [t for t in warm_ids for _ in range(2)],
                completions(family, env, warm_ids, 2, "issue"),
            )
            # A repository task (a real bank's): its hidden record is the repository kind.
            hidden = env.task_bank.get(measured[0]).hidden if measured else None
            repo = isinstance(hidden, dict) and hidden.get("kind") == "repo"
        finally:
            env.close()
        if plain if plain is not None else repo:
            sample = plain_sample(batch, group, plain_per_task)
            for repeat in range(repeats):
                for size in sizes if repeat % 2 == 0 else sizes[::-1]:
                    row = measure(env_id, size, False, sample, warm, 1, env_kwargs, "plain")
                    row.repeat = repeat
                    row.sample_of = len(batch[0]) if len(sample[0]) < len(batch[0]) else 0
                    _keep(rows, row, show)
        if cold if cold is not None else repo:
            for size in sizes:
                row = measure(env_id, size, True, batch, warm, 1, env_kwargs, "cold")
                _keep(rows, row, show)
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
                    _keep(rows, row, show)
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
