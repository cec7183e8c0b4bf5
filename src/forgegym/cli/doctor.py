"""``forgegym doctor``: which sandbox isolation features are active on this machine."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass
from forgegym.cli.common import (
    make_console,
)

__all__ = ["cmd_doctor"]


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
