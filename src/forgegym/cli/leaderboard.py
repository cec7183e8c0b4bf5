"""``forgegym leaderboard RESULTS...``: models and policies compared, with intervals."""

from __future__ import annotations

import argparse
import sys

from forgegym.cli.common import (
    CLIError,
    Commands,
    check_output,
    make_console,
    one_line,
    weights_arg,
)

__all__ = ["add_parser", "cmd_leaderboard"]


def add_parser(sub: Commands) -> None:
    """Add ``leaderboard`` with its options to the ``forgegym`` parser."""
    p = sub.add_parser(
        "leaderboard",
        help="compare models and policies from results files, with intervals",
        description="One row per model or policy of the results files (`forgegym eval` "
        "writes them), a column per family with the difficulty-weighted metric and its "
        "95% interval over tasks (Student t), the aggregate over families, and a paired "
        "t-test of each row's difference with the leader on the tasks both played. Rows "
        "are compared at equal runs; files are checked against their tasks first.",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results files (JSON)")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--markdown", action="store_true", help="print a markdown table")
    form.add_argument("--html", action="store_true", help="print an HTML page")
    form.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    p.add_argument(
        "--metric",
        default="best",
        help="best (best-of-runs score; at a common K when rows ran different numbers of "
        "runs), score (mean of runs), success, best_success, pass@K, best@K",
    )
    p.add_argument(
        "--no-task-check",
        action="store_true",
        help="do not look the tasks up in their env's default bank (files played with "
        "another bank that do not record it)",
    )
    p.add_argument(
        "--weights",
        type=weights_arg,
        default="20,35,45",
        metavar="E,M,H",
        help="difficulty weights easy..hard (default: 20,35,45)",
    )
    p.add_argument("--out", metavar="PATH", help="write the table to PATH (markdown by default)")
    p.set_defaults(func=cmd_leaderboard)


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
