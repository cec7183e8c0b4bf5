"""Pass-rate estimation benchmark: the pool (one ``run_many``) versus plain subprocesses.

``forgegym bench --env Forge/FlakyRepair-v0`` calls :func:`run_bench`.
"""

from __future__ import annotations

import time
from typing import Any

from forgegym.envs.flaky.bank import FlakyTaskBank
from forgegym.envs.flaky.chaos import make_schedule
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.runs import chaos_jobs
from forgegym.sandbox.workspace import Workspace

__all__ = ["run_bench"]


def run_bench(
    reruns: int = 20, task_id: str | None = None, *, verbose: bool = True
) -> dict[str, Any]:
    """Time one pass-rate estimate over ``reruns`` chaos reruns with the fork-server pool
    (one ``run_many``, warmed first) and with ``reruns`` plain subprocess runs."""
    from forgegym.sandbox.runners import ForkServerRunner, SubprocessRunner

    bank = FlakyTaskBank()
    task = bank.get(task_id or bank.task_ids(1, seed=0)[0])
    h = FlakyHidden.of(task)
    workspace = Workspace(
        task.files, task.editable_files, prefix="fg-flaky-bench-", data_files=task.data_files
    )
    try:
        directory = str(workspace.grading_copy())
        jobs = chaos_jobs(
            directory,
            h.target,
            h.test_ids,
            h.test_paths,
            make_schedule(h.schedule_seed, reruns),
        )
        with ForkServerRunner() as pool:
            pool.run_many(jobs[:2])  # warm the zygotes: a trainer's pool is long-lived
            start = time.perf_counter()
            pooled = pool.run_many(jobs)
            pool_s = time.perf_counter() - start
        with SubprocessRunner(workers=1) as plain:
            start = time.perf_counter()
            serial = [plain.run(job) for job in jobs]
            plain_s = time.perf_counter() - start
    finally:
        workspace.close()
    same = [r.status for r in pooled] == [r.status for r in serial]
    result = {
        "task_id": task.task_id,
        "reruns": reruns,
        "pool_s": pool_s,
        "subprocess_s": plain_s,
        "speedup": plain_s / pool_s if pool_s > 0 else float("inf"),
        "same_statuses": same,
    }
    if verbose:
        print(
            f"{reruns} reruns of {task.task_id}: pool {pool_s:.2f}s, plain subprocess "
            f"{plain_s:.2f}s, speedup {result['speedup']:.1f}x"
        )
    return result
