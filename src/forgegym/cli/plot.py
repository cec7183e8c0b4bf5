"""``forgegym plot``: episode dashboards, curriculum curves and learning reports."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    CLIError,
    Commands,
    check_output,
    int_at_least,
    one_line,
    require_extra,
)

__all__ = ["add_parser", "cmd_plot"]


def add_parser(sub: Commands) -> None:
    """Add ``plot`` with its options to the ``forgegym`` parser."""
    p = sub.add_parser(
        "plot",
        help="plots of eval results, curriculum state and learning reports",
        description="episode: the dashboard of a `forgegym eval` results file. curriculum: "
        "pass@k per task and tier sizes over time from a curriculum state file. learning: "
        "a benchmarks/learning.py report. The output's suffix picks the format (.png, "
        ".pdf, .svg, ...). Needs matplotlib (the plot extra).",
    )
    p.add_argument(
        "kind", choices=["episode", "curriculum", "learning", "telemetry"], help="what to plot"
    )
    p.add_argument(
        "input",
        metavar="INPUT",
        help="RESULTS.json (episode), STATE.json (curriculum) or a learning report (learning)",
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="PATH", help="file to write; suffix = format"
    )
    p.add_argument(
        "--episode",
        type=int_at_least(0),
        default=None,
        metavar="INDEX",
        help="plot only this episode of the results (default: all)",
    )
    p.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace) -> int:
    require_extra("matplotlib", "plot", "plot")
    from forgegym.play import plots

    source = Path(args.input)
    if not source.exists():
        raise CLIError(f"{args.input}: no such file")
    if not source.is_file():
        raise CLIError(f"{args.input}: not a file")
    if args.episode is not None and args.kind != "episode":
        raise CLIError("--episode applies to `plot episode` only")
    out = check_output(args.output, "-o", suffixes=sorted(plots.output_formats()))
    try:
        text = source.read_text(encoding="utf-8")
        if args.kind == "telemetry":  # JSON lines, one row per logging step
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CLIError(f"{args.input}: not a JSON file ({one_line(str(exc))})") from None
    try:
        if args.kind == "telemetry":
            plots.plot_telemetry(data, out)
        elif args.kind == "episode":
            plots.plot_episode(data, out, episode=args.episode)
        elif args.kind == "learning":
            from forgegym.integrations.learning import plot_learning

            plot_learning(data, out)
        else:
            plots.plot_curriculum(data, out)
    except ValueError as exc:  # the input's schema: name the file
        raise CLIError(f"{args.input}: {one_line(str(exc))}") from None
    print(f"wrote {out}")
    return 0
