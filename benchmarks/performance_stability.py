"""Stability of ``Forge/Performance-v0`` verdicts under CPU load (issue #12, Must show 2).

Grades the reference and the naive (O(n) per operation) solution of N naive-start
tasks R times each, in batches like a GRPO reward call, while H CPU-bound processes
(``while True: pass``) run beside it, and prints how often every (task, solution)
pair got the same pass/fail verdict in all R gradings, and how often that verdict was
the expected one (reference solved, naive not). Target 100%, floor 99%.

    python benchmarks/performance_stability.py                 # 50 tasks x 5, 2 hogs
    python benchmarks/performance_stability.py --tasks 6 --repeats 3

Nothing here asserts a time: the verdicts rest on scaling exponents and ratios that
the parent measures next to the reference in the same batch.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from forgegym.envs.performance.bank import PerformanceTaskBank
from forgegym.envs.performance.catalog import structure
from forgegym.envs.performance.grader import PerformanceGrader
from forgegym.grading.batch import Submission, grade_many
from forgegym.sandbox.runners import get_default_runner
from forgegym.sandbox.workspace import Workspace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write the verdicts as JSON after every round")
    args = parser.parse_args(argv)
    bank = PerformanceTaskBank()
    ids = bank.task_ids(args.tasks, seed=args.seed, difficulty=2)
    tasks = [bank.get(i) for i in ids]
    grader = PerformanceGrader()
    runner = get_default_runner()
    # A SIGTERM ends the run through ``finally`` too, so the hogs never outlive it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    verdicts: dict[tuple[str, str], list[bool]] = defaultdict(list)
    excess: dict[tuple[str, str], list[str]] = defaultdict(list)
    started = time.time()
    try:
        for round_ in range(args.repeats):
            workspaces, subs, keys = [], [], []
            for task in tasks:
                s = structure(task.hidden["structure"])
                ws = Workspace(task.files, task.editable_files, prefix="fg-perf-stab-")
                workspaces.append(ws)
                for kind in ("reference", "naive"):
                    subs.append(Submission(task=task, files={s.path: s.source(kind)}, workspace=ws))
                    keys.append((task.task_id, kind))
            try:
                breakdowns = grade_many(grader, subs, runner)
            finally:
                for ws in workspaces:
                    ws.close()
            for key, breakdown in zip(keys, breakdowns, strict=True):
                verdicts[key].append(PerformanceGrader.solved(breakdown))
                excess[key].append(breakdown.terms["complexity"].detail.split("(excess ")[-1][:5])
            same, expected, pairs = _agreement(verdicts)
            print(
                f"round {round_ + 1}/{args.repeats} done at {time.time() - started:.0f}s: "
                f"same verdict so far {same}/{pairs}, expected {expected}/{pairs}",
                flush=True,
            )
            if args.out is not None:
                _write(args, verdicts, excess, round_ + 1, time.time() - started)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    same, expected, pairs = _agreement(verdicts)
    for (task_id, kind), v in sorted(verdicts.items()):
        marks = "".join("P" if x else "F" for x in v)
        print(f"{task_id:42s} {kind:9s} {marks}  excess {' '.join(excess[(task_id, kind)])}")
    print(
        f"\n{args.tasks} tasks x 2 solutions x {args.repeats} gradings, {args.hogs} CPU hogs: "
        f"same verdict every time {same}/{pairs} ({100 * same / pairs:.1f}%); "
        f"expected verdict every time {expected}/{pairs} ({100 * expected / pairs:.1f}%); "
        f"{time.time() - started:.0f}s"
    )
    return 0 if same == pairs else 1


def _agreement(verdicts: dict[tuple[str, str], list[bool]]) -> tuple[int, int, int]:
    """(pairs with one verdict every time, pairs with the expected one every time, pairs)."""
    same = sum(len(set(v)) == 1 for v in verdicts.values())
    expected = sum(all(v) if k[1] == "reference" else not any(v) for k, v in verdicts.items())
    return same, expected, len(verdicts)


def _write(
    args: argparse.Namespace,
    verdicts: dict[tuple[str, str], list[bool]],
    excess: dict[tuple[str, str], list[str]],
    rounds: int,
    seconds: float,
) -> None:
    same, expected, pairs = _agreement(verdicts)
    gradings = sum(len(v) for v in verdicts.values())
    agreeing = sum(
        max(v.count(True), v.count(False)) for v in verdicts.values()
    )  # gradings that agree with their pair's majority verdict
    payload = {
        "tasks": args.tasks,
        "repeats": args.repeats,
        "rounds_done": rounds,
        "hogs": args.hogs,
        "seconds": round(seconds),
        "pairs": pairs,
        "same_verdict_pairs": same,
        "expected_verdict_pairs": expected,
        "gradings": gradings,
        "gradings_agreeing_with_majority": agreeing,
        "verdicts": {
            f"{task_id} {kind}": {
                "passed": v,
                "excess": excess[(task_id, kind)],
            }
            for (task_id, kind), v in sorted(verdicts.items())
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
