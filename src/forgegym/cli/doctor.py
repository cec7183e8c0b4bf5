"""``forgegym doctor``: which sandbox isolation features are active on this machine."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass
from forgegym.cli.common import Commands, make_console

__all__ = ["add_parser", "cmd_doctor"]


def add_parser(sub: Commands) -> None:
    """Add ``doctor`` with its options to the ``forgegym`` parser."""
    p = sub.add_parser(
        "doctor",
        help="which sandbox isolation features are active here",
        description="Which of the sandbox's isolation features (namespaces, seccomp, "
        "Landlock, rlimits, ...) are active on this machine, and why others are not.",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows (one per feature)")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    import platform

    from rich.table import Table

    from forgegym.sandbox.doctor import doctor_report

    report = doctor_report()
    rows: list[dict[str, Any]] = [
        {"feature": r.name, "active": r.active, "detail": r.detail} for r in report
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    console = make_console()
    console.print(f"forgegym doctor — Python {platform.python_version()} on {platform.platform()}")
    table = Table(title="sandbox isolation")
    table.add_column("feature")
    table.add_column("active")
    table.add_column("detail")
    for row in rows:
        table.add_row(row["feature"], "yes" if row["active"] else "no", row["detail"])
    console.print(table)
    return 0
