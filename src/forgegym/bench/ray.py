"""``forgegym bench --ray``: grading throughput of the local pool vs Ray, as ratios.

Grades the same GRPO-style groups (each task's reference fix and a no-op submit, as
single-turn completions through ``grade_completions``) with

1. the local fork-server pool (the baseline of this table),
2. :class:`~forgegym.sandbox.runners.ray.RayRunner` on a local Ray of the same cores,
3. :class:`RayRunner` on a two-node ``ray.cluster_utils.Cluster`` on this machine
   (the cores split between the nodes),

and checks that every configuration returns identical verdicts (reward, score, gates).
On one machine Ray can only add overhead; the table says how much, so that the gain
of adding nodes can be judged against it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RayBench", "print_ray_bench", "run_ray_bench"]


@dataclass
class RayBench:
    env_id: str
    completions: int
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return all(row["identical"] for row in self.rows)


def _verdicts(env: Any, groups: list[tuple[str, list[str]]]) -> tuple[list[Any], float]:
    start = time.perf_counter()
    verdicts = []
    for task_id, completions in groups:
        for reward, breakdown in env.unwrapped.grade_completions(task_id, completions):
            verdicts.append(
                (round(float(reward), 9), round(float(breakdown.score), 9), tuple(breakdown.gates))
            )
    return verdicts, time.perf_counter() - start


def _groups(env_id: str, tasks: int, seed: int) -> list[tuple[str, list[str]]]:
    import gymnasium as gym

    from forgegym.core.env import ForgeEnv
    from forgegym.policies import make as make_policy

    env = gym.make(env_id, max_steps=1)
    try:
        base = env.unwrapped
        if not isinstance(base, ForgeEnv):
            raise ValueError(f"env_id: {env_id!r} is not a forgegym environment")
        bank = base.task_bank
        reference = make_policy("reference", env)
        noop = make_policy("noop", env)
        groups = []
        for task_id in bank.task_ids(tasks, seed=seed):
            info = {"task_id": task_id}
            groups.append((task_id, [reference("", info), noop("", info)]))
        return groups
    finally:
        env.close()


@contextlib.contextmanager
def _local_ray(cpus: int) -> Iterator[None]:
    import ray

    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@contextlib.contextmanager
def _two_node_ray(cpus: int) -> Iterator[None]:
    import ray
    from ray.cluster_utils import Cluster

    head = max(1, cpus // 2)
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": head, "include_dashboard": False}
    )
    try:
        cluster.add_node(num_cpus=max(1, cpus - head))
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            yield
        finally:
            ray.shutdown()
    finally:
        cluster.shutdown()


def run_ray_bench(env_id: str | None = None, *, tasks: int = 8, seed: int = 0) -> RayBench:
    """Time grading of ``tasks`` groups (reference + no-op each) on each configuration."""
    import gymnasium as gym

    from forgegym.family.registration import env_ids
    from forgegym.sandbox.runners import ForkServerRunner
    from forgegym.sandbox.runners.ray import RayRunner

    env_id = env_id or env_ids()[0]
    cpus = len(os.sched_getaffinity(0))
    groups = _groups(env_id, tasks, seed)
    total = sum(len(c) for _, c in groups)
    bench = RayBench(env_id=env_id, completions=total)

    def measure(label: str, make_runner: Callable[[], Any], nodes: int) -> None:
        runner = make_runner()
        env = gym.make(env_id, max_steps=1, runner=runner)
        try:
            _verdicts(env, groups[:1])  # warm-up: pools, imports, actor start
            verdicts, seconds = _verdicts(env, groups)
        finally:
            env.close()
            runner.close()
        baseline = bench.rows[0] if bench.rows else None
        rate = total / seconds
        bench.rows.append(
            {
                "config": label,
                "nodes": nodes,
                "workers": runner.workers,
                "completions_per_s": rate,
                "ratio": rate / baseline["completions_per_s"] if baseline else 1.0,
                "identical": baseline is None or verdicts == baseline["_verdicts"],
                "_verdicts": verdicts,
            }
        )

    measure("local fork-server pool", lambda: ForkServerRunner(workers=cpus), 1)
    with _local_ray(cpus):
        measure("Ray, local (same machine)", RayRunner, 1)
    with _two_node_ray(cpus):
        measure("Ray, two-node local cluster", RayRunner, 2)
    return bench


def print_ray_bench(bench: RayBench) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"grading throughput: {bench.env_id}, {bench.completions} completions "
        "(reference + no-op per task)"
    )
    for column in (
        "configuration",
        "nodes",
        "workers",
        "completions/s",
        "× local pool",
        "verdicts",
    ):
        table.add_column(column)
    for row in bench.rows:
        table.add_row(
            row["config"],
            str(row["nodes"]),
            str(row["workers"]),
            f"{row['completions_per_s']:.2f}",
            f"{row['ratio']:.2f}",
            "identical" if row["identical"] else "DIFFERENT",
        )
    Console(width=140).print(table)
