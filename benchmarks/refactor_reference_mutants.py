"""Mutants of the reference refactorings against the hidden checks (issue #37).

``python benchmarks/refactor_reference_mutants.py [--kinds reduce_complexity,state_to_object]
[--tasks 100] [--seed 0]``

For up to ``--tasks`` tasks of each kind (seeded sample), every independent-operator
mutant (:mod:`forgegym.tasklib.operators`) of the reference refactoring's files runs on
the task's hidden checks (what grading runs) and on a much larger fuzzing set
(:mod:`forgegym.envs.refactor.reference_mutants`). Per kind and half (a fixed hash of
task and mutant): mutants, the detectable ones, the share of those the hidden checks
kill, and the tasks where a detectable mutant survives (it would reach success). The
survivors are listed. Results go to ``benchmarks/results/refactor_reference_mutants.json``.
About ten minutes for the two kinds' 47 tasks on two loaded cores.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from forgegym.envs.refactor.bank import RefactorTaskBank, find_spec, load_manifest
from forgegym.envs.refactor.reference_mutants import (
    kill_rates_by_kind,
    measure_reference_mutants,
)
from forgegym.sandbox.runners import get_default_runner

RESULTS = Path(__file__).parent / "results" / "refactor_reference_mutants.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default="reduce_complexity,state_to_object")
    parser.add_argument("--tasks", type=int, default=100, help="tasks per kind at most")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    console = Console(width=140)
    kinds = [k for k in args.kinds.split(",") if k]
    ids: list[str] = []
    for kind in kinds:
        mine = sorted(
            e["task_id"] for e in load_manifest()["tasks"] if e["task_id"].split("/")[1] == kind
        )
        ids += sorted(random.Random(args.seed).sample(mine, min(args.tasks, len(mine))))
    bank = RefactorTaskBank()
    tasks = [bank.get(i) for i in ids]
    specs = {i: find_spec(i) for i in ids}
    start = time.perf_counter()
    records = measure_reference_mutants(tasks, specs, get_default_runner(), log=console.print)
    elapsed = time.perf_counter() - start
    rates = kill_rates_by_kind(records)
    table = Table(title=f"Mutants of the reference refactorings ({elapsed:.0f}s)")
    for column in (
        "kind",
        "half",
        "tasks",
        "mutants",
        "detectable",
        "killed",
        "kill rate",
        "tasks with a survivor",
    ):
        table.add_column(column, justify="left" if column in ("kind", "half") else "right")
    for kind, halves in rates.items():
        for half, row in halves.items():
            table.add_row(
                kind,
                half,
                str(row["tasks"]),
                str(row["mutants"]),
                str(row["detectable"]),
                str(row["killed"]),
                f"{row['kill_rate']:.1%}",
                str(row["tasks_with_survivor"]),
            )
    console.print(table)
    survivors = [r for r in records if r.detectable and not r.killed]
    for r in survivors:
        console.print(f"survivor: {r.task_id} {r.path} {r.site}: {r.description} ({r.half})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {"rates": rates, "survivors": [r.__dict__ for r in survivors], "seconds": elapsed},
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
