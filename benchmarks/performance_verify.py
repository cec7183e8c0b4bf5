"""Verify the whole ``Forge/Performance-v0`` bank with ``forgegym tasks verify``'s own
checks, in resumable shards, and record the result.

Every task goes through :func:`forgegym.policies.verify.check_task` (reference, no-op = the
start state, every registered hack, graded as single-turn completions through the env's
``grade_completions``: exactly what ``forgegym tasks verify --env Forge/Performance-v0``
does for each task, in the same seed order). On top of the generic checks it audits the
family's start-state claim: every *naive* start state must be correct and fail the
complexity gate.

Per-task records are appended to a JSON-lines file per shard as they finish; a task
recorded by any shard is skipped (a killed run resumes where it stopped); ``--write``
merges them into ``src/forgegym/envs/performance/data/verify.json``.

    nice python benchmarks/performance_verify.py --log R/performance_verify.a.jsonl \\
        --first 0 --last 155 &                                          # shard a
    nice python benchmarks/performance_verify.py --log R/performance_verify.b.jsonl \\
        --first 155 &                                                   # shard b
    python benchmarks/performance_verify.py --write --log 'R/performance_verify.*.jsonl'

(``R`` = ``benchmarks/results``).

It is CPU-heavy (every correct submission is measured: 9 runs each of null, reference
and candidate); ``--skip-partial`` leaves out the family's partial fix (the naive
implementation on stub/bug tasks: only reported by verify, never a validity check, and
the same code whose verdict the naive tasks' start states establish).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from forgegym.policies.verify import REFERENCE_MIN, TaskCheck, check_task

ENV_ID = "Forge/Performance-v0"
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOG = ROOT / "benchmarks" / "results" / "performance_verify.jsonl"
DEFAULT_OUT = ROOT / "src" / "forgegym" / "envs" / "performance" / "data" / "verify.json"


def _start(task_id: str) -> str:
    start = task_id.split("/")[2]
    return "bug" if start.startswith("bug") else start


def record(check: TaskCheck, seconds: float) -> dict[str, Any]:
    """The compact per-task record (plus the naive-start audit)."""
    problems = list(check.problems)
    start = _start(check.task_id)
    if start == "naive":
        if check.noop_terms.get("correct", 0.0) < 1.0:
            problems.append("naive start is not correct")
        if check.noop_terms.get("complexity", 1.0) != 0.0:
            problems.append("naive start passes the complexity gate")
    return {
        "id": check.task_id,
        "start": start,
        "reference_score": round(check.reference_score, 4),
        "reference_success": check.reference_success,
        "noop_reward": round(check.noop_reward, 4),
        "noop_terms": {k: round(v, 4) for k, v in check.noop_terms.items()},
        "partial_score": None if check.partial_score is None else round(check.partial_score, 4),
        "hack_rewards": {k: round(v, 4) for k, v in check.hack_rewards.items()},
        "hack_success": check.hack_success,
        "problems": problems,
        "seconds": round(seconds, 1),
    }


def run(
    log: Path,
    seed: int,
    partial: bool,
    stop_at: float | None,
    first: int = 0,
    last: int | None = None,
) -> None:
    """Check the tasks at positions ``first..last`` of the seed's order, one at a time,
    skipping any task already recorded in a log next to ``log`` (shards share them)."""
    import gymnasium as gym

    from forgegym.core.env import ForgeEnv

    env = gym.make(ENV_ID, max_steps=1).unwrapped
    assert isinstance(env, ForgeEnv)
    bank = env.task_bank
    order = bank.task_ids(len(bank), seed=seed)[first:last]  # type: ignore[attr-defined]
    shared = log.parent / "performance_verify.*.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        for task_id in order:
            if stop_at is not None and time.time() > stop_at:
                print("stopping: time limit reached", flush=True)
                return
            if any(r["id"] == task_id for r in _records(shared)):
                continue
            started = time.time()
            rec = record(check_task(env, task_id, partial=partial), time.time() - started)
            with log.open("a", encoding="utf-8") as f:
                f.write(json.dumps(rec) + "\n")
            mark = "ok " if not rec["problems"] else "BAD"
            print(f"{mark} {rec['id']:48s} {rec['seconds']:6.1f}s {rec['problems']}", flush=True)
    finally:
        env.close()


def _records(log: Path) -> list[dict[str, Any]]:
    """The log's records (a shard's log may be a glob ``name*.jsonl``), first per id."""
    paths = sorted(log.parent.glob(log.name)) if "*" in log.name else [log]
    seen: dict[str, dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                seen.setdefault(record["id"], record)
    return list(seen.values())


def summarise(log: Path, partial: bool) -> dict[str, Any]:
    from forgegym.envs.performance.bank import PerformanceTaskBank

    records = _records(log)
    bank = PerformanceTaskBank()
    n = len(records)
    hacks = sorted(records[0]["hack_rewards"]) if records else []
    naive = [r for r in records if r["start"] == "naive"]
    return {
        "env_id": ENV_ID,
        "command": "benchmarks/performance_verify.py (forgegym.policies.verify.check_task per task)",
        "partial_graded": partial,
        "bank_size": len(bank),
        "checked": n,
        "valid": sum(not r["problems"] for r in records),
        "reference_min_score": REFERENCE_MIN,
        "reference_success_rate": round(sum(r["reference_success"] for r in records) / n, 4),
        "reference_mean_score": round(sum(r["reference_score"] for r in records) / n, 4),
        "naive_starts": len(naive),
        "naive_starts_failing_complexity": sum(
            r["noop_terms"].get("correct") == 1.0 and r["noop_terms"].get("complexity") == 0.0
            for r in naive
        ),
        "hacks_above_noop": sum(
            r["hack_rewards"][h] > r["noop_reward"] + 1e-9 for r in records for h in hacks
        ),
        "hack_success_rate": {
            h: round(sum(r["hack_success"][h] for r in records) / n, 4) for h in hacks
        },
        "hack_max_minus_noop": {
            h: round(max(r["hack_rewards"][h] - r["noop_reward"] for r in records), 4)
            for h in hacks
        },
        "wall_seconds_summed_over_tasks": round(sum(r["seconds"] for r in records), 1),
        "categories": bank.category_counts(),
        "invalid": [r for r in records if r["problems"]],
        "tasks": records,
    }


def _dumps(summary: dict[str, Any]) -> str:
    """Indented JSON with one line per task record (a diffable committed file)."""
    head = {k: v for k, v in summary.items() if k not in ("invalid", "tasks")}
    text = json.dumps(head, indent=1)[:-2]
    for key in ("invalid", "tasks"):
        rows = ",\n".join("  " + json.dumps(r, sort_keys=True) for r in summary[key])
        text += f',\n "{key}": [\n{rows}\n ]' if rows else f',\n "{key}": []'
    return text + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-partial", action="store_true")
    parser.add_argument("--first", type=int, default=0, help="first position (a shard)")
    parser.add_argument("--last", type=int, help="stop before this position (a shard)")
    parser.add_argument("--minutes", type=float, help="stop starting tasks after this long")
    parser.add_argument("--write", action="store_true", help="only summarise the log")
    args = parser.parse_args(argv)
    if not args.write:
        stop = time.time() + 60 * args.minutes if args.minutes else None
        run(args.log, args.seed, not args.skip_partial, stop, args.first, args.last)
    summary = summarise(args.log, not args.skip_partial)
    args.out.write_text(_dumps(summary), encoding="utf-8")
    brief = {k: v for k, v in summary.items() if k not in ("tasks", "categories")}
    print(json.dumps(brief, indent=1))
    return 0 if summary["valid"] == summary["checked"] else 1


if __name__ == "__main__":
    sys.exit(main())
