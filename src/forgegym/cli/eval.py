"""``forgegym eval``: env x policy x episodes, a progress bar, a summary table and a results file."""

from __future__ import annotations

import argparse
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    check_env,
    check_llm,
    check_output,
    checked_env_ids,
    make_console,
    one_line,
    parse_kwargs,
    record_episode,
)

__all__ = ["cmd_eval"]


def cmd_eval(args: argparse.Namespace) -> int:
    from rich.progress import Progress
    from rich.table import Table

    from forgegym.play.evaluation import evaluate, summarise
    from forgegym.play.policies.llm import LLMPolicyError
    from forgegym.play.results import Results

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

    report = Results(metadata={"command": "forgegym eval", "seed": args.seed})
    console = make_console()
    try:
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
                        on_episode=partial(record_episode, report, progress, bar),
                    )
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
        raise CLIError(reason) from None
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
    report.save(out)
    console.print(f"results written to {out}")
    return 0
