"""``forgegym leaderboard RESULTS...``: models and policies compared, with intervals."""

from __future__ import annotations

import argparse
import sys

from forgegym.cli.common import CLIError, check_output, make_console, one_line

__all__ = ["cmd_leaderboard"]


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from forgegym.play.leaderboard import (
        build_leaderboard,
        load_results,
        to_html,
        to_markdown,
        to_rich,
    )

    try:
        loaded = load_results(args.results)
    except ValueError as exc:
        raise CLIError(one_line(str(exc))) from None
    out = check_output(args.out, "--out") if args.out else None
    try:
        board = build_leaderboard(
            loaded,
            metric=args.metric,
            weights=args.weights,
            check_tasks=not getattr(args, "no_task_check", False),
        )
    except ValueError as exc:
        raise CLIError(one_line(str(exc))) from None
    if args.json:
        text = board.model_dump_json(indent=2) + "\n"
    elif args.markdown:
        text = to_markdown(board)
    elif args.html:
        text = to_html(board)
    else:
        text = ""
    if out is not None:
        out.write_text(text or to_markdown(board), encoding="utf-8")
        print(f"wrote {out}")
    elif text:
        sys.stdout.write(text)
    else:
        console = make_console()
        for renderable in to_rich(board):
            console.print(renderable)
    return 0
