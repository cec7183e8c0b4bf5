"""``forgegym list``: registered ids, families, levels, task counts, policies and hacks."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sized
from typing import Any

from forgegym.cli.common import Commands, make_console

__all__ = ["add_parser", "cmd_list"]


def add_parser(sub: Commands) -> None:
    """Add ``list`` with its options to the ``forgegym`` parser."""
    p = sub.add_parser(
        "list",
        help="registered environments, task counts, policies and hacks",
        description="Every registered id with its family, difficulty levels and task "
        "count, and each family's policies and known hacks.",
    )
    p.add_argument("--json", action="store_true", help="print JSON rows (one per id)")
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from forgegym.family import iter_env_specs
    from forgegym.policies import policy_names

    envs = Table(title="forgegym environments")
    for column in ("id", "family", "difficulty levels", "tasks"):
        envs.add_column(column)
    by_family = Table(title="policies (--policy) per family")
    for column in ("family", "policies", "hacks (--policy hack:NAME)"):
        by_family.add_column(column)
    named = Table(title="other banks (make(..., bank=NAME)): projects and task counts")
    for column in ("id", "bank", "tasks", "projects"):
        named.add_column(column)
    named_rows: dict[str, dict[str, Any]] = {}
    rows = []
    banks: dict[str, Any] = {}
    for family, spec in iter_env_specs():
        policies = policy_names(family.name)
        hacks = [p.split(":", 1)[1] for p in policies if p.startswith("hack:")]
        if family.name not in banks:
            banks[family.name] = family.make_task_bank()
            by_family.add_row(
                family.name,
                ", ".join(p for p in policies if not p.startswith("hack:")),
                ", ".join(hacks) or "-",
            )
            for bank_name, factory in family.named_banks().items():
                try:
                    other = factory()
                except (FileNotFoundError, ValueError) as exc:
                    named.add_row(spec.env_id, bank_name, "-", f"not available: {exc}")
                    named_rows[bank_name] = {"tasks": 0, "projects": {}, "error": str(exc)}
                    continue
                projects = dict(getattr(other, "projects", dict)())
                count = len(other) if isinstance(other, Sized) else sum(projects.values())
                named_rows[bank_name] = {"tasks": count, "projects": projects}
                named.add_row(
                    spec.env_id,
                    bank_name,
                    str(count),
                    ", ".join(f"{k} ({v})" for k, v in projects.items()) or "-",
                )
        bank = banks[family.name]
        size = len(bank) if hasattr(bank, "__len__") else None
        levels = [int(level) for level in bank.difficulty_levels]
        row: dict[str, Any] = {
            "id": spec.env_id,
            "family": family.name,
            "levels": levels,
            "tasks": size,
            "policies": policies,
            "hacks": hacks,
        }
        if family.env_cls.named_banks:
            row["banks"] = {name: named_rows[name] for name in family.env_cls.named_banks}
        rows.append(row)
        envs.add_row(
            spec.env_id,
            family.name,
            ", ".join(map(str, levels)),
            "unbounded" if size is None else str(size),
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        console = make_console()
        console.print(envs)
        console.print(named)
        console.print(by_family)
    return 0
