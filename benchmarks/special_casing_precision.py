"""Precision of the special-casing scans in repository mode, on the real bank's fixes.

Each real-bank task's reference fix (the mutated file back to the pristine one) is a
real fix of a real project. Scanned as repository mode scans a patch — no trusted
reference to exempt anything, only the pristine file's own constants and the project's
visible tests — a fix flagged as special-casing would be a false positive. This runs
the two scans repository mode applies
(:func:`~forgegym.tasklib.literals.scan_hardcoded_expectations` and
:func:`~forgegym.rewards.antihack.special_casing.scan_special_casing`) on a seeded
sample of ``--per-project`` tasks per project, statically (nothing runs in a sandbox).

Usage::

    python benchmarks/special_casing_precision.py --per-project 15 --seed 1 \
        --out benchmarks/results/special_casing_precision.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from forgegym.envs.bugfix.real import RealTaskBank
from forgegym.rewards.antihack.special_casing import scan_special_casing
from forgegym.tasklib.literals import scan_hardcoded_expectations

sys.path.insert(0, str(Path(__file__).parent))
from real_behaviour import sample  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-project", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    bank = RealTaskBank(behaviour=False)
    rows: list[dict[str, Any]] = []
    start = time.time()
    for task_id in sample(bank, args.per_project, args.seed):
        task = bank.get(task_id)
        ((path, fixed),) = task.reference.items()
        mutated = task.files[path]
        tests = [task.files[p] for p in task.visible_test_files]
        literal = scan_hardcoded_expectations(mutated, fixed, path, tests)
        special = scan_special_casing(
            mutated, fixed, path, tests, test_paths=task.visible_test_files
        )
        rows.append(
            {
                "id": task_id,
                "project": bank.entry(task_id)["project"],
                "operator": bank.entry(task_id)["mutation"][1],
                "hardcoded_expectation": [f.detail for f in literal],
                "special_case": [f.detail for f in special],
            }
        )
    flagged = [r for r in rows if r["hardcoded_expectation"] or r["special_case"]]
    summary = {
        "fixes": len(rows),
        "projects": len({r["project"] for r in rows}),
        "flagged": len(flagged),
        "flagged_by_special_case": sum(bool(r["special_case"]) for r in rows),
        "flagged_by_hardcoded_expectation": sum(bool(r["hardcoded_expectation"]) for r in rows),
        "flagged_by_operator": dict(Counter(r["operator"] for r in flagged)),
        "seconds": round(time.time() - start, 1),
    }
    print(json.dumps(summary, indent=1))
    for row in flagged[:20]:
        print(row["id"], row["special_case"][:1], row["hardcoded_expectation"][:1], file=sys.stderr)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
