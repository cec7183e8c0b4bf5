"""The ``forgegym`` command.

::

    forgegym list                         # ids, families, task counts
    forgegym doctor                       # which sandbox isolation features are active here
    forgegym eval --policy reference      # env x policy x episodes; table + JSON results
    forgegym tasks verify --env ID --json # validate tasks (reference high, noop low, hacks <= noop)
    forgegym bench [--env ID] [--vector | --ray]  # runner / family / vector / Ray (ratios)
    forgegym serve ENV_ID [--port 8000]   # OpenEnv-compatible server + dashboard at /
    forgegym plot episode RESULTS.json -o dash.png
    forgegym plot curriculum STATE.json -o curve.png

Every command iterates over the registered families (:mod:`forgegym.family`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _console() -> Any:
    from rich.console import Console

    # Piped output (CI logs, files) gets rich's 80 columns by default, which cuts env ids.
    return Console() if sys.stdout.isatty() else Console(width=140)


def _env_ids(requested: Sequence[str] | None) -> list[str]:
    from forgegym.registration import env_ids

    known = env_ids()
    if not requested or list(requested) == ["all"]:
        return known
    unknown = [e for e in requested if e not in known]
    if unknown:
        raise SystemExit(f"forgegym: unknown --env {unknown}; registered: {known}")
    return list(requested)


def _parse_kwargs(pairs: Sequence[str] | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"forgegym: --env-kwarg expects KEY=VALUE, got {pair!r}")
        try:
            kwargs[key] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[key] = value
    return kwargs


def _advance(progress: Any, bar: Any, _done: object) -> None:
    progress.advance(bar)


# ------------------------------------------------------------------ commands
def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from forgegym.family import iter_env_specs

    table = Table(title="forgegym environments")
    for column in ("id", "family", "difficulty levels", "tasks"):
        table.add_column(column)
    rows = []
    banks: dict[str, Any] = {}
    for family, spec in iter_env_specs():
        if family.name not in banks:
            banks[family.name] = family.make_task_bank()
        bank = banks[family.name]
        size = len(bank) if hasattr(bank, "__len__") else "unbounded"
        levels = ", ".join(str(level) for level in bank.difficulty_levels)
        rows.append({"id": spec.env_id, "family": family.name, "levels": levels, "tasks": size})
        table.add_row(spec.env_id, family.name, levels, str(size))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        _console().print(table)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    import platform

    from rich.table import Table

    from forgegym.sandbox.confinement import doctor_report

    report = doctor_report()
    rows: list[dict[str, Any]] = [
        {"feature": r.name, "active": r.active, "detail": r.detail} for r in report
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    console = _console()
    console.print(f"forgegym doctor — Python {platform.python_version()} on {platform.platform()}")
    table = Table(title="sandbox isolation")
    table.add_column("feature")
    table.add_column("active")
    table.add_column("detail")
    for row in rows:
        table.add_row(row["feature"], "yes" if row["active"] else "no", row["detail"])
    console.print(table)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from rich.progress import Progress
    from rich.table import Table

    from forgegym.evaluation import evaluate, summarise
    from forgegym.results import EvalResults

    env_ids = _env_ids(args.env)
    policies = args.policy or ["noop", "reference"]
    env_kwargs = _parse_kwargs(args.env_kwarg)
    if args.max_steps is not None:
        env_kwargs["max_steps"] = args.max_steps
    report = EvalResults(metadata={"command": "forgegym eval", "seed": args.seed})
    console = _console()
    with Progress(console=console, transient=False, disable=args.quiet) as progress:
        for env_id in env_ids:
            for policy in policies:
                bar = progress.add_task(f"{env_id} × {policy}", total=args.episodes)
                results = evaluate(
                    env_id,
                    policy,
                    episodes=args.episodes,
                    seed=args.seed,
                    env_kwargs=env_kwargs,
                    log_steps=args.log_steps or None,
                    on_episode=partial(_advance, progress, bar),
                )
                report.episodes.extend(results.episodes)
                if "report" in results.metadata:  # the family's own statistics of the run
                    reports = report.metadata.setdefault("reports", {})
                    reports[f"{env_id} {policy}"] = results.metadata["report"]
    table = Table(title="forgegym eval")
    for column in ("env", "policy", "episodes", "success rate", "mean score", "mean reward"):
        table.add_column(column)
    for run in summarise(report):
        table.add_row(
            run.env_id,
            run.policy,
            str(run.episodes),
            f"{run.success_rate:.2%}",
            f"{run.mean_score:.3f}",
            f"{run.mean_reward:.3f}",
        )
    console.print(table)
    out = Path(args.out)
    report.save(out)
    console.print(f"results written to {out}")
    return 0


def cmd_tasks_verify(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from forgegym.verify import verify_tasks

    summaries = []
    with Progress(console=_console(), disable=args.json) as progress:
        for env_id in _env_ids(args.env):
            bar = progress.add_task(f"verify {env_id}", total=args.limit)
            summary = verify_tasks(
                env_id,
                limit=args.limit,
                seed=args.seed,
                on_task=partial(_advance, progress, bar),
            )
            summaries.append(summary)
    ok = all(s.valid == s.checked for s in summaries)
    if args.json:
        payload = [s.model_dump(mode="json") for s in summaries]
        print(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2))
    else:
        from rich.table import Table

        table = Table(title="forgegym tasks verify")
        for column in (
            "env",
            "bank size",
            "checked",
            "valid",
            "reference score",
            "noop score",
            "hacks > noop",
        ):
            table.add_column(column)
        for s in summaries:
            table.add_row(
                s.env_id,
                str(s.bank_size),
                str(s.checked),
                str(s.valid),
                f"{s.reference_mean_score:.3f}",
                f"{s.noop_mean_score:.3f}",
                str(s.hacks_above_noop),
            )
        _console().print(table)
        for s in summaries:
            for check in s.invalid[:20]:
                _console().print(f"[red]invalid[/red] {check.task_id}: {'; '.join(check.problems)}")
    return 0 if ok else 1


def cmd_bench(args: argparse.Namespace) -> int:
    if args.ray:
        from forgegym.sandbox.ray_bench import print_ray_bench, run_ray_bench

        if args.env:
            _env_ids([args.env])  # a clear error for an unknown id
        bench = run_ray_bench(args.env, tasks=args.tasks)
        print_ray_bench(bench)
        return 0 if bench.identical else 1
    if args.vector:
        from forgegym.vector import run_vector_bench

        for env_id in _env_ids([args.env] if args.env else None):
            # Default: every env's grading fans out over all cores through the shared pool.
            run_vector_bench(env_id)
            # One sandbox worker per env process: what vectorisation adds when each env's
            # step is serial (how a user runs N envs on N cores without oversubscription).
            run_vector_bench(env_id, env_kwargs={"runner_workers": 1})
        return 0
    if args.env:
        from forgegym.family import family_for_env

        _env_ids([args.env])  # a clear error for an unknown id
        family_for_env(args.env).run_bench()
        return 0
    from forgegym.sandbox.bench import print_runner_bench, run_runner_bench

    print_runner_bench(run_runner_bench(runs=args.runs))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from forgegym.server import serve
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise SystemExit(f"forgegym: serve needs the serve extra ({exc})") from None
    if args.env_id not in _env_ids(None):
        raise SystemExit(f"forgegym: unknown ENV_ID {args.env_id!r}; registered: {_env_ids(None)}")
    if args.max_sessions < 1:
        raise SystemExit(f"forgegym: --max-sessions must be >= 1, got {args.max_sessions}")
    serve(
        args.env_id,
        host=args.host,
        port=args.port,
        env_kwargs=_parse_kwargs(args.env_kwarg),
        max_sessions=args.max_sessions,
        idle_timeout_s=args.idle_timeout if args.idle_timeout > 0 else None,
        curriculum=args.curriculum,
    )
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from forgegym import plots

    if args.kind == "episode":
        plots.plot_episode(args.input, args.output, episode=args.episode)
    elif args.kind == "learning":
        from forgegym.learning import plot_learning

        plot_learning(args.input, args.output)
    else:
        plots.plot_curriculum(args.input, args.output)
    print(f"wrote {args.output}")
    return 0


# -------------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forgegym", description=__doc__.split("\n")[1])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="registered environments, families and task counts")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("doctor", help="which sandbox isolation features are active here")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("eval", help="run baseline or LLM policies on environments")
    p.add_argument("--env", action="append", help="environment id (repeatable; default all)")
    p.add_argument(
        "--policy",
        action="append",
        help="noop | random | reference | hack:<name> | llm (repeatable; default noop+reference)",
    )
    p.add_argument("--episodes", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--env-kwarg", action="append", metavar="KEY=VALUE")
    p.add_argument("--out", default="forgegym-results.json")
    p.add_argument("--log-steps", action="store_true", help="print [START]/[STEP]/[END] lines")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("tasks", help="task validation")
    tasks_sub = p.add_subparsers(dest="tasks_command", required=True)
    v = tasks_sub.add_parser("verify", help="reference high, start fails, noop low, hacks <= noop")
    v.add_argument("--env", action="append", help="environment id (repeatable; default all)")
    v.add_argument("--limit", type=int, default=50, help="tasks to grade per environment")
    v.add_argument("--seed", type=int, default=0)
    v.add_argument("--json", action="store_true", help="print a JSON summary")
    v.set_defaults(func=cmd_tasks_verify)

    p = sub.add_parser("bench", help="benchmarks, reported as ratios against the baseline")
    p.add_argument("--env", help="benchmark one id's family grading (see `forgegym list`)")
    p.add_argument("--vector", action="store_true", help="async vs sync vector rollouts")
    p.add_argument("--runs", type=int, default=30, help="runs per runner (runner bench)")
    p.add_argument(
        "--ray", action="store_true", help="grading: local pool vs Ray, one and two nodes"
    )
    p.add_argument("--tasks", type=int, default=8, help="tasks graded per config (--ray)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "serve", help="serve an env over OpenEnv's HTTP/WebSocket protocol + dashboard"
    )
    p.add_argument("env_id", metavar="ENV_ID", help="a registered id, e.g. Forge/Bugfix-v0")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-sessions", type=int, default=64, help="session cap (HTTP + WebSocket)")
    p.add_argument(
        "--idle-timeout", type=float, default=600.0, help="close idle sessions after S seconds"
    )
    p.add_argument(
        "--curriculum", action="store_true", help="a shared pass@k scheduler picks the tasks"
    )
    p.add_argument("--env-kwarg", action="append", metavar="KEY=VALUE")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("plot", help="plots of eval results and curriculum state")
    p.add_argument("kind", choices=["episode", "curriculum", "learning"])
    p.add_argument(
        "input",
        help="RESULTS.json (episode), STATE.json (curriculum) or a benchmarks/learning.py "
        "report (learning)",
    )
    p.add_argument("-o", "--output", required=True, help="PNG path to write")
    p.add_argument("--episode", type=int, default=None, help="episode index (episode plots)")
    p.set_defaults(func=cmd_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        print(f"forgegym: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
