"""False-rejection rate of ``Forge/Performance-v0``'s reference solutions under CPU load
(issue #28, Must show 5).

Grades each bank task's reference solution (the structure the task asks for, which must
be ``solved``) in batches like a GRPO reward call, while H CPU-bound processes
(``while True: pass``) run beside it, and prints, per structure and overall, how many
gradings rejected it (not ``solved``), with the measured ratios: the excess exponent's
median and interval, the repetitions the adaptive measurement took, the excess growth
and the speed ratio to the reference. The target is a false-rejection rate of at most
0.5%; the summary gives the rate and its one-sided 95% upper bound (Clopper-Pearson),
and the load average before and after the run.

    python benchmarks/performance_false_rejection.py                # the whole bank, 2 hogs
    python benchmarks/performance_false_rejection.py --per-structure 2 --out results.json

``--per-structure N`` grades N tasks of each structure (a stratified slice: the
reference's measurement depends on the structure and the workload profile, not on the
task's start state). Nothing here asserts a time: verdicts rest on exponents and ratios
measured next to the reference in the same batch.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from forgegym.envs.performance.bank import PerformanceTaskBank
from forgegym.envs.performance.catalog import structure
from forgegym.envs.performance.grader import PerformanceGrader
from forgegym.grading.batch import Submission, grade_many
from forgegym.sandbox.runners import get_default_runner
from forgegym.sandbox.workspace import Workspace


def clopper_pearson_upper(failures: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided upper confidence bound of a binomial rate (exact, by bisection)."""
    if trials == 0:
        return 1.0
    if failures >= trials:
        return 1.0
    alpha = 1.0 - confidence

    def cdf(p: float) -> float:  # P(X <= failures | p)
        return sum(
            math.comb(trials, i) * p**i * (1 - p) ** (trials - i) for i in range(failures + 1)
        )

    low, high = failures / trials, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if cdf(mid) > alpha:
            low = mid
        else:
            high = mid
    return high


def select(
    bank: PerformanceTaskBank, per_structure: int | None, limit: int | None, skip: int = 0
) -> list[str]:
    """Every bank task, or ``per_structure`` of each structure (round-robin over the
    profiles so each profile appears, after the first ``skip`` picks: a later slice),
    at most ``limit`` in all."""
    by_structure: dict[str, list[str]] = defaultdict(list)
    for task_id in bank.ids():
        if task_id.count("/") == 3:  # the seed task has no profile
            by_structure[task_id.split("/")[1]].append(task_id)
    chosen: list[str] = []
    for _, ids in sorted(by_structure.items()):
        if per_structure is None:
            chosen.extend(ids)
            continue
        by_profile: dict[str, list[str]] = defaultdict(list)
        for task_id in ids:
            by_profile[task_id.split("/")[3]].append(task_id)
        queues = [sorted(v) for _, v in sorted(by_profile.items())]
        picked: list[str] = []
        while len(picked) < skip + per_structure and any(queues):
            for queue in queues:
                if queue and len(picked) < skip + per_structure:
                    picked.append(queue.pop(0))
        chosen.extend(picked[skip:])
    return chosen[:limit] if limit is not None else chosen


def record(task_id: str, breakdown: Any) -> dict[str, Any]:
    """What one grading measured (read from the complexity term's measurement)."""
    detail = breakdown.terms["complexity"].detail if "complexity" in breakdown.terms else ""
    row: dict[str, Any] = {
        "task": task_id,
        "solved": PerformanceGrader.solved(breakdown),
        "gates": list(breakdown.gates),
        "detail": detail,
    }
    for key, marker, end in (
        ("excess", "(excess ", ","),
        ("low", "interval [", ","),
        ("high", ", ", "]"),
        ("repetitions", "over ", " repetitions"),
        ("growth", "excess growth ", " "),
        ("speed", "speed ", "x the reference"),
    ):
        try:
            text = detail
            if key == "high":
                text = detail.split("interval [", 1)[1]
            value = text.split(marker, 1)[1].split(end, 1)[0]
            row[key] = float(value)
        except (IndexError, ValueError):
            row[key] = math.nan
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-structure", type=int, default=None)
    parser.add_argument("--skip", type=int, default=0, help="with --per-structure: a later slice")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8, help="submissions per grade_many")
    parser.add_argument("--out", type=Path, help="write the rows as JSON after every batch")
    args = parser.parse_args(argv)
    bank = PerformanceTaskBank()
    ids = select(bank, args.per_structure, args.limit, args.skip)
    grader = PerformanceGrader()
    runner = get_default_runner()
    console = Console(width=140)
    # A SIGTERM ends the run through ``finally`` too, so the hogs never outlive it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load_before = os.getloadavg()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    started = time.time()
    rows: list[dict[str, Any]] = []
    try:
        for start in range(0, len(ids), args.batch):
            chunk = ids[start : start + args.batch]
            workspaces, subs = [], []
            for task_id in chunk:
                task = bank.get(task_id)
                s = structure(task.hidden["structure"])
                ws = Workspace(task.files, task.editable_files, prefix="fg-perf-fr-")
                workspaces.append(ws)
                subs.append(
                    Submission(task=task, files={s.path: s.source("reference")}, workspace=ws)
                )
            try:
                breakdowns = grade_many(grader, subs, runner)
            finally:
                for ws in workspaces:
                    ws.close()
            rows.extend(record(t, b) for t, b in zip(chunk, breakdowns, strict=True))
            rejected = sum(not r["solved"] for r in rows)
            console.print(
                f"{len(rows)}/{len(ids)} graded at {time.time() - started:.0f}s, "
                f"load {os.getloadavg()[0]:.1f}: {rejected} rejected",
                highlight=False,
            )
            if args.out is not None:
                _write(args.out, args, rows, load_before, started)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    load_after = os.getloadavg()
    _table(console, rows)
    rejected = sum(not r["solved"] for r in rows)
    console.print(
        f"\n{len(rows)} reference gradings ({len({r['task'].split('/')[1] for r in rows})} "
        f"structures), {args.hogs} CPU hogs, {os.cpu_count()} CPUs, load average "
        f"{load_before[0]:.1f} before -> {load_after[0]:.1f} after, "
        f"{time.time() - started:.0f}s: {rejected} rejected = "
        f"{100 * rejected / max(1, len(rows)):.2f}% (one-sided 95% upper bound "
        f"{100 * clopper_pearson_upper(rejected, len(rows)):.2f}%; target <= 0.5%)",
        highlight=False,
    )
    for r in rows:
        if not r["solved"]:
            console.print(f"rejected: {r['task']}: {r['gates']} {r['detail']}", highlight=False)
    if args.out is not None:
        _write(args.out, args, rows, load_before, started, load_after)
    return 0


def _table(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="Reference solutions under load, per structure")
    for column in (
        "structure",
        "gradings",
        "rejected",
        "excess median",
        "interval high (max)",
        "repetitions (mean)",
        "growth (max)",
        "speed ratio (min)",
    ):
        table.add_column(column, justify="left" if column == "structure" else "right")
    by_structure: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_structure[r["task"].split("/")[1]].append(r)

    def finite(values: list[float]) -> list[float]:
        return [v for v in values if math.isfinite(v)]

    for name, mine in sorted(by_structure.items()):
        excess = finite([r["excess"] for r in mine])
        high = finite([r["high"] for r in mine])
        reps = finite([r["repetitions"] for r in mine])
        growth = finite([r["growth"] for r in mine])
        speed = finite([r["speed"] for r in mine])
        table.add_row(
            name,
            str(len(mine)),
            str(sum(not r["solved"] for r in mine)),
            f"{statistics.median(excess):+.2f}" if excess else "-",
            f"{max(high):+.2f}" if high else "-",
            f"{statistics.fmean(reps):.1f}" if reps else "-",
            f"{max(growth):+.2f}" if growth else "-",
            f"{min(speed):.2f}" if speed else "-",
        )
    console.print(table)


def _write(
    path: Path,
    args: argparse.Namespace,
    rows: list[dict[str, Any]],
    load_before: tuple[float, float, float],
    started: float,
    load_after: tuple[float, float, float] | None = None,
) -> None:
    rejected = sum(not r["solved"] for r in rows)
    payload = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "hogs": args.hogs,
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": load_after,
        "seconds": round(time.time() - started),
        "gradings": len(rows),
        "rejected": rejected,
        "false_rejection_rate": rejected / max(1, len(rows)),
        "upper_95": clopper_pearson_upper(rejected, len(rows)),
        "rows": rows,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
