"""``forgegym bench``: runner latency, family grading, vector, Ray and GRPO throughput benchmarks."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    Commands,
    check_env,
    checked_env_ids,
    int_at_least,
    parse_kwargs,
    require_extra,
)

__all__ = ["add_parser", "cmd_bench"]


def add_parser(sub: Commands) -> None:
    """Add ``bench`` with its options to the ``forgegym`` parser."""
    p = sub.add_parser(
        "bench",
        help="benchmarks, reported as ratios against the baseline",
        description="Without options: the sandbox runner's latency, warm fork-server pool "
        "vs a plain `python -m pytest` per run. Speeds are reported as ratios.",
    )
    p.add_argument("--env", metavar="ID", help="benchmark this id's family grading")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--vector", action="store_true", help="async vs sync vector rollouts")
    mode.add_argument(
        "--ray", action="store_true", help="grading: local pool vs Ray, one and two nodes"
    )
    p.add_argument(
        "--runs", type=int_at_least(1), default=30, help="runs per runner (runner bench)"
    )
    mode.add_argument(
        "--reset",
        action="store_true",
        help="the first reset of random tasks, each in a fresh process, cached and cold "
        "(default: Forge/Bugfix-v0 bank=real, 50 tasks)",
    )
    p.add_argument(
        "--cold-tasks",
        type=int_at_least(0),
        default=10,
        help="--reset: tasks also measured cold (nothing unpacked)",
    )
    mode.add_argument(
        "--throughput",
        action="store_true",
        help="GRPO grading completions/s, one worker vs the pool, and where the time goes",
    )
    p.add_argument(
        "--tasks",
        type=int_at_least(1),
        default=None,
        help="tasks per config (--ray: 8, --throughput: 16)",
    )
    p.add_argument(
        "--group", type=int_at_least(1), default=8, help="completions per task (--throughput)"
    )
    p.add_argument(
        "--mix",
        choices=("issue", "distinct"),
        default="issue",
        help="--throughput completions: issue = half reference, half no-op per group; "
        "distinct = no two alike (each graded in full)",
    )
    p.add_argument(
        "--no-reference", action="store_true", help="skip the unoptimised path (--throughput)"
    )
    p.add_argument(
        "--repeats",
        type=int_at_least(1),
        default=1,
        help="measurements per configuration, pool sizes alternating (--throughput)",
    )
    p.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="gym.make keyword argument of --env (--throughput; bank=real: the real "
        "projects' tasks), VALUE parsed as JSON when it is; repeatable",
    )
    p.add_argument(
        "--no-cold",
        action="store_true",
        help="skip the cold rows (--throughput; measured by default for repository tasks)",
    )
    p.add_argument(
        "--no-plain",
        action="store_true",
        help="skip the plain-pytest baseline (--throughput; by default for repository tasks)",
    )
    p.add_argument(
        "--workers",
        type=int_at_least(1),
        nargs="+",
        default=None,
        metavar="N",
        help="--throughput: pool sizes measured (default: 1 and every usable core)",
    )
    p.add_argument(
        "--plain-per-task",
        type=int_at_least(1),
        default=None,
        metavar="K",
        help="--throughput: measure the plain-pytest baseline on K completions per task "
        "(spread over the group; it shares nothing between completions, so its figures "
        "per completion stand for the batch) (default: every completion)",
    )
    p.set_defaults(func=cmd_bench)


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
            plain_per_task=args.plain_per_task,
            workers=args.workers,
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
