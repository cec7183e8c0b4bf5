"""Adequacy of Refactor's hidden checks against mutants nobody tuned them to.

``python benchmarks/refactor_adequacy.py [--tasks 100] [--seed 0] [--cost 12]``

Samples ``--tasks`` tasks from the shipped manifest, makes every mutant of each task's
original module with :mod:`forgegym.tasklib.operators` (an operator set the generators
do not use), leaves out the mutants a much larger fuzzing set cannot tell from the
original (likely equivalent), and prints per task the share of the rest that the hidden
checks catch: the kind's own checks alone ("before") and with the adequacy checks
("after", what grading runs now). The mutant corpus is split in two fixed halves by a
hash of original and mutant: the tuning half (looked at while choosing the adequacy
inputs) and the held-out half (not looked at); both are reported.

``--cost N`` also grades the reference refactorings of N sampled tasks with and
without the adequacy checks, interleaved, and prints the per-task grading time ratio.
Results go to ``benchmarks/results/refactor_adequacy.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from forgegym.envs.refactor.adequacy import MutantRecord, kill_rates, measure
from forgegym.envs.refactor.bank import RefactorTaskBank, find_spec, load_manifest
from forgegym.sandbox.runners import get_default_runner

RESULTS = Path(__file__).parent / "results" / "refactor_adequacy.json"
TARGET = 0.95


def _sample(n: int, seed: int) -> list[str]:
    ids = sorted(e["task_id"] for e in load_manifest()["tasks"])
    return sorted(random.Random(seed).sample(ids, min(n, len(ids))))


def _summary(records: list[MutantRecord], task_keys: dict[str, str]) -> dict[str, Any]:
    rates = kill_rates(records)
    per_task = {t: rates[k] for t, k in task_keys.items() if k in rates}
    after = [r["after"] for r in per_task.values()]
    before = [r["before"] for r in per_task.values()]
    detectable = [r for r in records if r.detectable]
    return {
        "tasks": len(per_task),
        "mutants": len(records),
        "non_equivalent": len(detectable),
        "killed_before": sum(r.killed_before for r in detectable),
        "killed_after": sum(r.killed for r in detectable),
        "tasks_at_target_before": sum(b >= TARGET for b in before),
        "tasks_at_target_after": sum(a >= TARGET for a in after),
        "min_after": min(after, default=1.0),
        "mean_after": statistics.fmean(after) if after else 1.0,
        "min_before": min(before, default=1.0),
        "mean_before": statistics.fmean(before) if before else 1.0,
        "per_task": per_task,
    }


def _cost(task_ids: list[str]) -> dict[str, float]:
    """Median seconds to grade the reference of each task, without and with the
    adequacy checks (interleaved, three rounds), and the ratio."""
    from forgegym.envs.refactor.env import RefactorEnv
    from forgegym.envs.refactor.policies import reference_action

    manifest = load_manifest()
    banks = {
        "before": RefactorTaskBank(manifest={**manifest, "adequacy": {}}),
        "after": RefactorTaskBank(manifest=manifest),
    }
    envs = {name: RefactorEnv(task_bank=bank, max_steps=1) for name, bank in banks.items()}
    times: dict[str, list[float]] = {"before": [], "after": []}
    try:
        for round_ in range(3):
            for task_id in task_ids:
                for name in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                    env = envs[name]
                    env.reset(options={"task_id": task_id})
                    action = reference_action(banks[name].get(task_id))
                    start = time.perf_counter()
                    _, _, _, _, info = env.step(action)
                    elapsed = time.perf_counter() - start
                    if round_ > 0:  # the first round warms the pools and caches
                        times[name].append(elapsed)
                    if not info["success"]:
                        raise RuntimeError(f"reference of {task_id} failed ({name})")
    finally:
        for env in envs.values():
            env.close()
    b, a = statistics.median(times["before"]), statistics.median(times["after"])
    return {"before_s": b, "after_s": a, "ratio": a / b}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cost", type=int, default=0, help="tasks to time grading on")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--processes", type=int, default=2, help="input-drawing processes")
    parser.add_argument("--batch", type=int, default=10, help="originals measured at once")
    parser.add_argument("--reverse", action="store_true", help="originals in reverse order")
    parser.add_argument(
        "--only-records", action="store_true", help="report the --records, measure nothing"
    )
    parser.add_argument(
        "--records", type=Path, nargs="*", default=[], help="partial files to reuse"
    )
    args = parser.parse_args()
    console = Console()
    manifest = load_manifest()
    if not manifest.get("adequacy"):
        raise SystemExit(
            "the manifest has no adequacy section: run forgegym.envs.refactor.adequacy"
        )
    task_ids = _sample(args.tasks, args.seed)
    specs = {t: find_spec(t) for t in task_ids}
    task_keys = {t: s.origin_key for t, s in specs.items()}
    start = time.perf_counter()
    # Batches of originals, the records so far saved after each (a long run on a loaded
    # machine leaves a usable partial result).
    by_key: dict[str, list[Any]] = {}
    for spec in specs.values():
        by_key.setdefault(spec.origin_key, []).append(spec)
    keys = sorted(by_key, reverse=args.reverse)
    records: list[MutantRecord] = []
    for path in args.records:
        # Records a run saved (its partial file): those originals are not measured again.
        records += [MutantRecord(**r) for r in json.loads(path.read_text())]
    measured = {r.origin_key for r in records}
    keys = [k for k in keys if k not in measured and not args.only_records]
    # Tasks whose original was measured (all of them, unless --only-records cut short).
    task_ids = [t for t in task_ids if task_keys[t] in measured or task_keys[t] in keys]
    for first in range(0, len(keys), args.batch):
        batch = [s for k in keys[first : first + args.batch] for s in by_key[k]]
        records += measure(
            batch,
            manifest["adequacy"],
            get_default_runner(),
            processes=args.processes,
            log=console.print,
        )
        done = len(measured) + min(first + args.batch, len(keys))
        console.print(f"{done}/{len(by_key)} originals ({time.perf_counter() - start:.0f}s)")
        partial = args.out.with_suffix(".partial.json")
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps([r.__dict__ for r in records]) + "\n")
    elapsed = time.perf_counter() - start
    halves = {
        half: _summary([r for r in records if r.half == half], task_keys)
        for half in ("tuning", "held_out")
    }
    both = _summary(records, task_keys)

    table = Table(title=f"Independent-operator mutants caught per task ({len(task_ids)} tasks)")
    for column in ("task", "half", "mutants", "non-equiv.", "before", "after"):
        table.add_column(column, justify="left" if column in ("task", "half") else "right")
    for task_id in task_ids:
        for half in ("tuning", "held_out"):
            row = halves[half]["per_task"].get(task_id)
            if row is None:
                continue
            table.add_row(
                task_id.removeprefix("refactor/"),
                half,
                str(row["mutants"]),
                str(row["non_equivalent"]),
                f"{row['before']:.0%}",
                f"{row['after']:.0%}",
            )
    console.print(table)

    summary = Table(title="Summary (per task: share of non-equivalent mutants caught)")
    for column in (
        "half",
        "tasks",
        "mutants",
        "non-equiv.",
        "killed before",
        "killed after",
        f"tasks >= {TARGET:.0%} before",
        f"tasks >= {TARGET:.0%} after",
        "min after",
        "mean after",
    ):
        summary.add_column(column, justify="right")
    for name, s in (*halves.items(), ("both", both)):
        summary.add_row(
            name,
            str(s["tasks"]),
            str(s["mutants"]),
            str(s["non_equivalent"]),
            str(s["killed_before"]),
            str(s["killed_after"]),
            f"{s['tasks_at_target_before']}/{s['tasks']}",
            f"{s['tasks_at_target_after']}/{s['tasks']}",
            f"{s['min_after']:.0%}",
            f"{s['mean_after']:.1%}",
        )
    console.print(summary)

    operators = Table(title="By operator (both halves)")
    for column in ("operator", "mutants", "non-equiv.", "killed before", "killed after"):
        operators.add_column(column, justify="right")
    counts = Counter(r.operator for r in records)
    for op in sorted(counts):
        mine = [r for r in records if r.operator == op and r.detectable]
        operators.add_row(
            op,
            str(counts[op]),
            str(len(mine)),
            str(sum(r.killed_before for r in mine)),
            str(sum(r.killed for r in mine)),
        )
    console.print(operators)
    survivors = [r for r in records if r.detectable and not r.killed]
    for r in survivors:
        console.print(f"survivor ({r.half}): {r.module} {r.site} {r.description}")
    result: dict[str, Any] = {
        "command": f"python benchmarks/refactor_adequacy.py --tasks {args.tasks} --seed {args.seed}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": round(elapsed),
        "halves": {k: {x: y for x, y in v.items() if x != "per_task"} for k, v in halves.items()},
        "both": {x: y for x, y in both.items() if x != "per_task"},
        "per_task": {t: {h: halves[h]["per_task"].get(t) for h in halves} for t in task_ids},
        "survivors": [
            {"module": r.module, "site": r.site, "half": r.half, "what": r.description}
            for r in survivors
        ],
    }
    if args.cost:
        cost = _cost(task_ids[: args.cost])
        console.print(
            f"grading one reference: {cost['before_s'] * 1000:.0f} ms before, "
            f"{cost['after_s'] * 1000:.0f} ms after (x{cost['ratio']:.2f}), median of "
            f"{args.cost} tasks x 2 rounds"
        )
        result["cost"] = cost
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
