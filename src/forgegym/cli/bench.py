"""``forgegym bench``: runner latency, family grading, vector, Ray and GRPO throughput benchmarks."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    check_env,
    checked_env_ids,
    parse_kwargs,
    require_extra,
)

__all__ = ["cmd_bench"]


def cmd_bench(args: argparse.Namespace) -> int:
    if args.env:
        checked_env_ids([args.env])  # a clear error for an unknown id, before any work
        if not (args.ray or args.vector or args.throughput):
            from forgegym.family import families, family_for_env

            if not family_for_env(args.env).has_bench:
                with_bench = [i for f in families() if f.has_bench for i in f.env_ids]
                raise CLIError(
                    f"--env {args.env}: its family registers no grading benchmark; "
                    f"these do: {', '.join(with_bench)}"
                )
    if args.reset:
        from forgegym.bench.reset import bench_first_reset

        kwargs = parse_kwargs(args.env_kwarg)
        env_id = args.env or "Forge/Bugfix-v0"
        if not kwargs and env_id == "Forge/Bugfix-v0":
            kwargs = {"bank": "real"}
        check_env(env_id, kwargs)
        bench_first_reset(env_id, kwargs, tasks=args.tasks or 50, cold=args.cold_tasks)
        return 0
    if args.throughput:
        from forgegym.bench.throughput import bench_throughput

        env_kwargs = parse_kwargs(args.env_kwarg) or None
        if env_kwargs and not args.env:
            raise CLIError("--env-kwarg: give --env too (the keyword arguments of one id)")
        if env_kwargs:
            check_env(args.env, env_kwargs)
        bench_throughput(
            [args.env] if args.env else None,
            tasks=args.tasks or 16,
            group=args.group,
            mix=args.mix,
            reference=not args.no_reference,
            repeats=args.repeats,
            env_kwargs=env_kwargs,
            cold=False if args.no_cold else None,
            plain=False if args.no_plain else None,
        )
        return 0
    if args.ray:
        require_extra("ray", "ray", "bench --ray")
        from forgegym.bench.ray import print_ray_bench, run_ray_bench

        bench = run_ray_bench(args.env, tasks=args.tasks or 8)
        print_ray_bench(bench)
        return 0 if bench.identical else 1
    if args.vector:
        from forgegym.bench.vector import run_vector_bench

        for env_id in checked_env_ids([args.env] if args.env else None):
            # Default: every env's grading fans out over all cores through the shared pool.
            run_vector_bench(env_id)
            # One sandbox worker per env process: what vectorisation adds when each env's
            # step is serial (how a user runs N envs on N cores without oversubscription).
            run_vector_bench(env_id, env_kwargs={"runner_workers": 1})
        return 0
    if args.env:
        from forgegym.family import family_for_env

        family_for_env(args.env).run_bench()
        return 0
    from forgegym.bench.runner import print_runner_bench, run_runner_bench

    print_runner_bench(run_runner_bench(runs=args.runs))
    return 0
