"""Grade a sample of a bank's composed and reverted-fix tasks through the env (issue 39).

``python benchmarks/real_bank/verify_kinds.py [BANK_DIR] [--per-project 2] [--seed 0]
[--only multi|reverted] [--ids ID ...]``

For each project's ``.multi.jsonl.gz`` (two-bug tasks, ``forgegym tasks compose``) and
``.reverted.jsonl.gz`` (reverted upstream fixes, ``forgegym tasks revert``), draws up to
``--per-project`` entries and grades the reference fix (every changed file restored) and
the no-op through ``gym.make("Forge/Bugfix-v0", bank=BANK_DIR)``, behaviour checks
included: the reference must reach success and the no-op must not. Prints a table per
kind and writes ``benchmarks/results/verify_kinds.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from pathlib import Path

import gymnasium as gym
from rich.console import Console
from rich.table import Table

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.real import REAL_BANK_DIR
from forgegym.tasklib.factory.build import read_manifest

NOOP = json.dumps({"action": "submit"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bank", nargs="?", default=str(REAL_BANK_DIR))
    parser.add_argument("--per-project", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/results/verify_kinds.json")
    parser.add_argument(
        "--only", choices=("multi", "reverted"), help="one kind of manifest (default: both)"
    )
    parser.add_argument("--ids", nargs="*", default=[], help="these tasks too (if served)")
    args = parser.parse_args()
    bank = Path(args.bank)
    rng = random.Random(args.seed)
    suffixes = (
        (f".{args.only}.jsonl.gz",) if args.only else (".multi.jsonl.gz", ".reverted.jsonl.gz")
    )
    sample: list[str] = []
    served: set[str] = set()
    for manifest in sorted(bank.glob("*.jsonl.gz")):
        if manifest.name.endswith(suffixes):
            entries = read_manifest(manifest)
            served |= {e["id"] for e in entries}
            sample += [e["id"] for e in rng.sample(entries, min(args.per_project, len(entries)))]
    sample += [i for i in args.ids if i in served and i not in sample]
    console = Console()
    env = gym.make("Forge/Bugfix-v0", bank=str(bank), max_steps=1)
    rows: list[dict[str, object]] = []
    start = time.monotonic()
    try:
        for task_id in sample:
            task = env.unwrapped.task_bank.get(task_id)
            edits = [{"path": p, "content": c} for p, c in sorted(task.reference.items())]
            fix = json.dumps({"action": "edit", "edits": edits})
            (ref, info), (noop, ninfo) = env.unwrapped.grade_completions(task_id, [fix, NOOP])
            rows.append(
                {
                    "id": task_id,
                    "kind": task.metadata["kind"],
                    "reference": round(ref, 4),
                    "reference_success": bool(env.unwrapped.solved(info)),
                    "noop": round(noop, 4),
                    "noop_success": bool(env.unwrapped.solved(ninfo)),
                    "behaviour": info.terms["behaviour"].detail[:120]
                    if "behaviour" in info.terms
                    else "",
                }
            )
            console.print(rows[-1])
    finally:
        env.close()
    by_kind: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_kind[str(row["kind"])].append(row)
    table = Table(title=f"reference and no-op on {len(rows)} sampled tasks of {bank}")
    for column in ("kind", "tasks", "reference succeeds", "no-op succeeds"):
        table.add_column(column)
    for kind, group in sorted(by_kind.items()):
        table.add_row(
            kind,
            str(len(group)),
            f"{sum(bool(r['reference_success']) for r in group)}/{len(group)}",
            f"{sum(bool(r['noop_success']) for r in group)}/{len(group)}",
        )
    console.print(table)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "bank": str(bank),
                "seconds": round(time.monotonic() - start, 1),
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
