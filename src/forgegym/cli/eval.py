"""``forgegym eval``: env x policy x episodes (or a model behind an OpenAI-compatible
endpoint, ``--model``), a progress bar, summary tables and a results file."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from forgegym.cli.common import (
    POLICY_HELP,
    CLIError,
    Commands,
    advance_progress,
    check_endpoint,
    check_env,
    check_llm,
    check_output,
    checked_env_ids,
    default_cache,
    int_at_least,
    make_console,
    make_progress,
    one_line,
    parse_kwargs,
    record_episode,
    require_extra,
    temperature_arg,
    weights_arg,
)

if TYPE_CHECKING:
    from rich.table import Table

    from forgegym.play.results import Results

__all__ = ["add_parser", "cmd_eval", "telemetry_table"]


def add_parser(sub: Commands) -> None:
    """Add ``eval`` with its options to the ``forgegym`` parser."""
    p = sub.add_parser(
        "eval",
        help="run baseline or LLM policies on environments",
        description="Play env x policy x episodes (seeds SEED, SEED+1, ...), print a "
        "summary table and write a JSON results file (`forgegym plot episode` reads it).",
    )
    p.add_argument(
        "--env",
        action="append",
        metavar="ID",
        help="environment id, repeatable (default: every registered id)",
    )
    p.add_argument("--policy", action="append", metavar="POLICY", help=POLICY_HELP)
    p.add_argument(
        "--episodes", type=int_at_least(1), default=5, help="episodes per env and policy"
    )
    p.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the first episode")
    p.add_argument(
        "--max-steps",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="steps per episode (default: the env's own)",
    )
    p.add_argument(
        "--env-kwarg",
        action="append",
        metavar="KEY=VALUE",
        help="gym.make keyword argument, VALUE parsed as JSON when it is; repeatable",
    )
    p.add_argument("--out", default="forgegym-results.json", metavar="PATH", help="results file")
    p.add_argument("--log-steps", action="store_true", help="print [START]/[STEP]/[END] lines")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--runs",
        type=int_at_least(1),
        default=1,
        help="runs per task (--model: independent samples; pass@k and best-of-runs need > 1)",
    )
    p.add_argument(
        "--canaries",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="also grade N canaries per env (impossible tasks: any success is cheating) with "
        "the reference, the no-op, every registered hack and the family's canary cheats; "
        "print each one's cheat rate and write it to the results file",
    )
    p.add_argument(
        "--weights",
        type=weights_arg,
        default="20,35,45",
        metavar="E,M,H",
        help="difficulty weights easy..hard, spread over each family's levels (default: 20,35,45)",
    )
    model = p.add_argument_group(
        "a model behind an OpenAI-compatible endpoint (instead of --policy)",
        "API_KEY (or OPENAI_API_KEY) is sent as the bearer token when set.",
    )
    model.add_argument("--model", metavar="NAME", help="the model to evaluate")
    model.add_argument(
        "--base-url",
        metavar="URL",
        help="the endpoint, e.g. http://localhost:8000/v1 (default: API_BASE_URL)",
    )
    model.add_argument(
        "--concurrency",
        type=int_at_least(1),
        default=None,
        metavar="C",
        help="episodes and requests in flight (default: 8)",
    )
    model.add_argument(
        "--temperature",
        type=temperature_arg,
        default=None,
        metavar="T",
        help="sampling temperature, fixed for every run (default: 0.2)",
    )
    model.add_argument(
        "--max-tokens",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="completion tokens per reply (default: 2048)",
    )
    model.add_argument(
        "--cache",
        metavar="PATH",
        help="completion cache, an SQLite file (default: ~/.cache/forgegym/completions.sqlite)",
    )
    model.add_argument("--no-cache", action="store_true", help="ask the endpoint every time")
    model.add_argument(
        "--no-history",
        action="store_true",
        help="send the system prompt and the current observation only, not the episode's "
        "chat history",
    )
    p.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    if args.model is not None:
        return _eval_model(args)
    for flag, given in (
        ("--base-url", args.base_url),
        ("--concurrency", args.concurrency),
        ("--temperature", args.temperature),
        ("--max-tokens", args.max_tokens),
        ("--cache", args.cache),
        ("--no-cache", args.no_cache),
        ("--no-history", args.no_history),
    ):
        if given not in (None, False):
            raise CLIError(f"{flag} applies to `eval --model` only")
    from rich.table import Table

    from forgegym.play.evaluation import evaluate, summarise
    from forgegym.play.results import Results
    from forgegym.policies.llm import LLMPolicyError

    # Everything a user can get wrong is checked here, before the first progress bar.
    env_ids = checked_env_ids(args.env)
    policies = list(dict.fromkeys(args.policy or ["noop", "reference"]))
    out = check_output(args.out, "--out")
    env_kwargs = parse_kwargs(args.env_kwarg)
    if args.max_steps is not None:
        env_kwargs["max_steps"] = args.max_steps
    for env_id in env_ids:
        check_env(env_id, env_kwargs, policies)
    if "llm" in policies:
        check_llm()

    report = Results(
        metadata={"command": "forgegym eval", "seed": args.seed, "env_kwargs": env_kwargs}
    )
    console = make_console()
    try:
        with make_progress(console, disable=args.quiet) as progress:
            for env_id in env_ids:
                for policy in policies:
                    bar = progress.add_task(f"{env_id} × {policy}", total=args.episodes * args.runs)
                    for run in range(args.runs):  # the same tasks (seeds) in every run
                        results = evaluate(
                            env_id,
                            policy,
                            episodes=args.episodes,
                            seed=args.seed,
                            env_kwargs=env_kwargs,
                            log_steps=args.log_steps or None,
                            on_episode=partial(record_episode, report, progress, bar, run=run),
                        )
                        telemetry = report.metadata.setdefault("telemetry", {})
                        key = f"{env_id} {policy}" + (f" run {run}" if args.runs > 1 else "")
                        telemetry[key] = results.metadata["telemetry"]
                    if "report" in results.metadata:  # the family's own statistics
                        reports = report.metadata.setdefault("reports", {})
                        reports[f"{env_id} {policy}"] = results.metadata["report"]
    except (LLMPolicyError, KeyboardInterrupt) as exc:
        # Keep what finished: an LLM run that fails after an hour has paid for it.
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else one_line(str(exc))
        if report.episodes:
            report.metadata["incomplete"] = reason
            report.save(out)
            reason += f"; the {len(report.episodes)} finished episodes are in {out}"
        if isinstance(exc, KeyboardInterrupt):  # 130, as for `eval --model` and a shell
            print(f"forgegym: {reason}", file=sys.stderr)
            return 130
        raise CLIError(reason) from None
    table = Table(
        title="forgegym eval",
        caption="plain means over episodes; the leaderboard below weights difficulty levels",
    )
    for column in ("env", "policy", "episodes", "success rate", "mean score", "mean reward"):
        table.add_column(column)
    for row in summarise(report):
        table.add_row(
            row.env_id,
            row.policy,
            str(row.episodes),
            f"{row.success_rate:.2%}",
            f"{row.mean_score:.3f}",
            f"{row.mean_reward:.3f}",
        )
    console.print(table)
    _add_aggregate(report, args.weights, console)
    if args.canaries is not None:
        console.print(_play_canaries(report, env_ids, args.canaries, args.seed, env_kwargs))
    console.print(telemetry_table(report.metadata.get("telemetry", {})))
    report.save(out)
    console.print(f"results written to {out}")
    return 0


def _play_canaries(
    report: Results, env_ids: Sequence[str], n: int, seed: int, env_kwargs: dict[str, Any]
) -> Table:
    """Every scripted policy's cheat rate on ``n`` canaries of each env's family
    (:func:`~forgegym.play.canaries.canary_cheat_rates`), into the results' metadata
    (``canaries["<env>"]["<policy>"]``, and ``forgegym/cheat_rate`` in the telemetry)."""
    from rich.table import Table

    from forgegym.family import family_for_env
    from forgegym.play.canaries import canary_cheat_rates

    table = Table(
        title=f"cheat rate on canaries (impossible tasks; {n} per env)",
        caption="any success on a canary is cheating; cheat:* is the family's known cheat, "
        "the positive control that must reach it; every row is in the results file",
    )
    for column in ("env", "policy", "canaries", "solved", "cheat rate"):
        table.add_column(column)
    kwargs = {k: v for k, v in env_kwargs.items() if k != "max_steps"}
    for env_id in env_ids:
        family = family_for_env(env_id)
        if family.canary_bank() is None:
            table.add_row(env_id, "-", "0", "-", "no canaries")
            continue
        rates = canary_cheat_rates(family.name, n=n, seed=seed, env_id=env_id, env_kwargs=kwargs)
        stored = report.metadata.setdefault("canaries", {}).setdefault(env_id, {})
        telemetry = report.metadata.setdefault("telemetry", {})
        quiet: list[str] = []  # hacks that solved no canary: one summary row
        for policy, rate in rates.items():
            stored[policy] = rate.model_dump(mode="json")
            telemetry[f"{env_id} {policy} canaries"] = rate.telemetry
            control = policy.startswith("cheat:")
            if rate.solved == 0 and not control and policy not in ("reference", "noop"):
                quiet.append(policy)
                continue
            label = f"{policy} (positive control)" if control else policy
            table.add_row(
                env_id, label, str(rate.canaries), str(rate.solved), f"{rate.cheat_rate:.2%}"
            )
        if quiet:
            table.add_row(env_id, f"{len(quiet)} hacks", str(n), "0", "each at 0.00%")
    return table


def _add_aggregate(report: Results, weights: Sequence[float], console: Any) -> None:
    """The protocol's aggregates into the results' metadata, and their table."""
    from forgegym.play.aggregate import summarise_results
    from forgegym.play.leaderboard import build_leaderboard, to_rich

    if not report.episodes:
        return
    summaries = summarise_results(report.episodes, weights=weights)
    report.metadata["weights"] = list(weights)
    report.metadata["aggregate"] = {p: s.model_dump(mode="json") for p, s in summaries.items()}
    board = build_leaderboard([("this run", report)], weights=weights, check_tasks=False)
    for renderable in to_rich(board):
        console.print(renderable)


def _eval_model(args: argparse.Namespace) -> int:
    """``forgegym eval --model NAME --base-url URL``: the evaluation protocol."""
    from rich.table import Table

    from forgegym.clients.async_chat import AsyncChatClient, CompletionCache
    from forgegym.play.model_eval import ModelEvalError, evaluate_model

    if args.policy:
        raise CLIError("--policy and --model are two kinds of evaluation; give one")
    if getattr(args, "canaries", None) is not None:
        raise CLIError("--canaries grades the scripted policies; it does not apply to --model")
    require_extra("openai", "llm", "eval --model")
    env_ids = checked_env_ids(args.env)
    out = check_output(args.out, "--out")
    env_kwargs = parse_kwargs(args.env_kwarg)
    if args.max_steps is not None:
        env_kwargs["max_steps"] = args.max_steps
    for env_id in env_ids:
        check_env(env_id, env_kwargs)
    base_url = args.base_url or os.environ.get("API_BASE_URL")
    if not base_url:
        raise CLIError(
            "--model needs --base-url URL (or API_BASE_URL): an OpenAI-compatible endpoint"
        )
    cache = None
    if not args.no_cache:
        path = check_output(args.cache or str(default_cache()), "--cache")
        try:
            cache = CompletionCache(path)
        except ValueError as exc:
            raise CLIError(f"--cache {path}: {one_line(str(exc))}") from None
    check_endpoint(base_url, "--base-url")
    concurrency = args.concurrency or 8
    try:
        client = AsyncChatClient(
            model=args.model,
            base_url=base_url,
            api_key=os.environ.get("API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            temperature=0.2 if args.temperature is None else args.temperature,
            max_tokens=args.max_tokens or 2048,
            concurrency=concurrency,
            cache=cache,
        )
    except ValueError as exc:
        raise CLIError(one_line(str(exc))) from None
    console = make_console()
    total = len(env_ids) * args.episodes * args.runs
    try:
        with make_progress(console, disable=args.quiet) as progress:
            bar = progress.add_task(f"{args.model} × {len(env_ids)} envs", total=total)
            results = evaluate_model(
                client,
                env_ids,
                episodes=args.episodes,
                runs=args.runs,
                seed=args.seed,
                env_kwargs=env_kwargs,
                concurrency=concurrency,
                history=not args.no_history,
                weights=args.weights,
                on_episode=partial(advance_progress, progress, bar),
                log=sys.stdout if args.log_steps else None,
            )
    except ModelEvalError as exc:
        reason = one_line(str(exc))
        if exc.results.episodes:
            exc.results.save(out)
            reason += f"; the {len(exc.results.episodes)} finished episodes are in {out}"
        raise CLIError(reason) from None
    finally:
        if cache is not None:
            cache.close()
    from forgegym.play.leaderboard import build_leaderboard, to_rich

    table = Table(title=f"forgegym eval --model {args.model}")
    for column in ("family", "level", "tasks", "episodes", "score", "best of runs", "success"):
        table.add_column(column)
    summary = results.metadata["aggregate"][args.model]
    for cell in [*summary["cells"], summary["aggregate"]]:
        m = cell["metrics"]
        table.add_row(
            cell["family"],
            cell["level"],
            str(cell["tasks"]),
            str(cell["runs"]),
            *(
                f"{m[k]['value']:.3f} [{m[k]['low']:.3f}, {m[k]['high']:.3f}]"
                for k in ("score", "best", "success")
            ),
        )
    console.print(table)
    board = build_leaderboard([(str(out), results)], weights=args.weights, check_tasks=False)
    for renderable in to_rich(board)[1:]:
        console.print(renderable)
    console.print(telemetry_table(results.metadata.get("telemetry", {})))
    usage = results.metadata["usage"]
    console.print(
        f"{usage['completions']} completions ({usage['cache_hits']} from the cache), "
        f"{usage['requests']} requests, {usage['retries']} retries "
        f"({usage['rate_limited']} rate-limited), {usage['prompt_tokens']} prompt + "
        f"{usage['completion_tokens']} completion tokens, "
        f"{results.metadata['wall_seconds']:.1f} s"
    )
    results.save(out)
    console.print(f"results written to {out}")
    return 0


def telemetry_table(telemetry: dict[str, dict[str, float]]) -> Table:
    """One row per (env, policy) run and telemetry key (gate and hack rates, the
    unparseable share, invalid rewards, the cheat rate on canaries)."""
    from rich.table import Table

    table = Table(title="cheating telemetry (share of episodes)")
    for column in ("env policy", "key", "rate"):
        table.add_column(column)
    for run, values in telemetry.items():
        for key, value in sorted(values.items()):
            table.add_row(run, key.removeprefix("forgegym/"), f"{value:.2%}")
    return table
