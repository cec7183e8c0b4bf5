"""Behaviour checks of the real bank: coverage and precision on a seeded sample.

For a seeded sample of real-bank tasks (``--per-project`` per project, drawn with
``--seed``) this computes each task's behaviour checks
(:mod:`forgegym.envs.bugfix.behaviour`; cached, so a rerun only grades) and, with
``--grade``, grades the reference (the pristine file) and the no-op as a one-step
episode. It reports:

* coverage: the share of tasks whose checks grade (``checked`` with at least one
  discriminating call), and the other statuses with their counts;
* precision: the share of references that reach success (must be 100%), and of no-ops
  that do not;
* per project: tasks, covered, reference successes.

Usage::

    python benchmarks/real_behaviour.py --per-project 5 --seed 0 --grade \
        --out benchmarks/results/real_behaviour.json

``--redo-from EARLIER.json`` measures again only the tasks of an earlier run whose checks
did not grade (after a change of the recorder or probe), and reports the earlier rows
with those replaced (each measured row says ``"remeasured": true``). ``--resume`` keeps
the rows an interrupted run of the same sample already wrote to ``--out`` and measures
only the rest.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.bugfix.behaviour import BehaviourChecks
from forgegym.envs.bugfix.real import RealTaskBank

NOOP = json.dumps({"action": "submit"})


def sample(bank: RealTaskBank, per_project: int, seed: int) -> list[str]:
    """``per_project`` task ids of every project, drawn with ``seed``."""
    by_project: dict[str, list[str]] = defaultdict(list)
    for task_id in sorted(bank.ids()):
        by_project[bank.entry(task_id)["project"]].append(task_id)
    rng = random.Random(seed)
    out: list[str] = []
    for project in sorted(by_project):
        ids = by_project[project]
        out += rng.sample(ids, min(per_project, len(ids)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-project", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grade", action="store_true", help="grade reference and no-op")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--redo-from",
        type=Path,
        default=None,
        help="an earlier --out: measure again its tasks whose checks did not grade",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows --out already holds for this sample; measure the rest",
    )
    parser.add_argument(
        "--redo-failures",
        action="store_true",
        help="with --resume: measure again the rows whose reference did not succeed "
        '(after a fix; each such row says "remeasured": true)',
    )
    args = parser.parse_args(argv)
    if args.resume and (args.out is None or args.redo_from is not None):
        parser.error("--resume needs --out and excludes --redo-from")

    bank = RealTaskBank()
    ids = sample(bank, args.per_project, args.seed)
    earlier: list[dict[str, Any]] = []
    if args.redo_from is not None:
        # the earlier run's own tasks: a bank with more projects draws another sample
        earlier = json.loads(args.redo_from.read_text())["rows"]
        ids = [r["id"] for r in earlier if not r.get("active")]
    env = gym.make("Forge/Bugfix-v0", task_bank=bank, max_steps=1) if args.grade else None
    rows: list[dict[str, Any]] = []
    if args.resume and args.out.is_file():
        wanted = set(ids)
        rows = [r for r in json.loads(args.out.read_text())["rows"] if r["id"] in wanted]
        if args.grade:  # a row written without grading is measured again
            rows = [r for r in rows if "reference_success" in r]
        if args.redo_failures:
            rows = [r for r in rows if r.get("reference_success")]
        done = {r["id"] for r in rows}
        ids = [i for i in ids if i not in done]
    start = time.time()
    for n, task_id in enumerate(ids, 1):
        entry = bank.entry(task_id)
        row: dict[str, Any] = {"id": task_id, "project": entry["project"]}
        try:
            task = bank.get(task_id)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            row["status"] = f"error: {type(exc).__name__}: {exc}"[:200]
            rows.append(row)
            continue
        checks = BehaviourChecks.model_validate(task.hidden["behaviour"])
        row.update(
            status=checks.status,
            active=checks.active,
            calls=len(checks.calls),
            discriminating=len(checks.discriminating),
            derived_discriminating=len(checks.derived_discriminating),
            note=checks.note,
        )
        if env is not None:
            # a composed task's reference may span modules: every file it changes
            edits = [{"path": p, "content": c} for p, c in sorted(task.reference.items())]
            fix = json.dumps({"action": "edit", "edits": edits})
            (ref, ref_b), (noop, noop_b) = env.unwrapped.grade_completions(task_id, [fix, NOOP])
            row.update(
                reference=ref,
                reference_success=env.unwrapped.solved(ref_b),
                reference_behaviour=ref_b.terms["behaviour"].detail,
                noop=noop,
                noop_success=env.unwrapped.solved(noop_b),
            )
        row["remeasured"] = bool(earlier) or args.redo_failures
        rows.append(row)
        print(
            f"[{n}/{len(ids)} {time.time() - start:.0f}s] {task_id} {row['status']} "
            f"{row.get('discriminating', '')} ref={row.get('reference_success', '')}",
            file=sys.stderr,
            flush=True,
        )
        if args.out is not None and n % 5 == 0:  # partial results survive an interrupted run
            merged = _merged(earlier, rows)
            _write(args.out, _summary(merged, start), merged)
    if env is not None:
        env.close()
    rows = _merged(earlier, rows)
    summary = _summary(rows, start)
    print(json.dumps({k: v for k, v in summary.items() if k != "per_project"}, indent=1))
    if args.out is not None:
        _write(args.out, summary, rows)
    return 0


def _merged(earlier: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The earlier rows, those measured again replaced (all of ``rows`` without any)."""
    if not earlier:
        return rows
    again = {r["id"]: r for r in rows}
    return [again.get(r["id"], r) for r in earlier]


def _write(out: Path, summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


def _summary(rows: list[dict[str, Any]], start: float) -> dict[str, Any]:
    statuses = Counter(r["status"] for r in rows)
    active = sum(bool(r.get("active")) for r in rows)
    graded = [r for r in rows if "reference_success" in r]
    summary = {
        "tasks": len(rows),
        "projects": len({r["project"] for r in rows}),
        "with_behaviour_checks": active,
        "coverage": round(active / len(rows), 4) if rows else 0.0,
        "statuses": dict(statuses),
        "graded": len(graded),
        "reference_success": sum(r["reference_success"] for r in graded),
        "noop_success": sum(r["noop_success"] for r in graded),
        "remeasured": sum(bool(r.get("remeasured")) for r in rows),
        "seconds": round(time.time() - start, 1),
        "per_project": {
            p: {
                "tasks": sum(r["project"] == p for r in rows),
                "covered": sum(bool(r.get("active")) for r in rows if r["project"] == p),
                "reference_success": sum(
                    bool(r.get("reference_success")) for r in graded if r["project"] == p
                ),
            }
            for p in sorted({r["project"] for r in rows})
        },
    }
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
