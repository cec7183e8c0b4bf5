"""``forgegym tasks verify``: validate tasks (reference high, start fails, no-op low, hacks <= no-op)."""

from __future__ import annotations

import argparse
import json
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    advance_progress,
    checked_env_ids,
    make_console,
    make_progress,
)

__all__ = ["cmd_tasks_verify"]


def cmd_tasks_verify(args: argparse.Namespace) -> int:

    from forgegym.play.verify import verify_tasks

    env_ids = checked_env_ids(args.env)  # before the progress bar
    summaries = []
    with make_progress(make_console(), disable=args.json) as progress:
        for env_id in env_ids:
            bar = progress.add_task(f"verify {env_id}", total=args.limit)
            summary = verify_tasks(
                env_id,
                limit=args.limit,
                seed=args.seed,
                offset=args.offset,
                partial=not args.skip_partial,
                on_task=partial(advance_progress, progress, bar),
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
        make_console().print(table)
        for s in summaries:
            for check in s.invalid[:20]:
                make_console().print(
                    f"[red]invalid[/red] {check.task_id}: {'; '.join(check.problems)}"
                )
    return 0 if ok else 1
