"""The real bank's eligibility bound counted on validated canaries (issue #37, D6, D7).

``python benchmarks/real_canary_eligibility.py [--n 60] [--seed 1] [--rows bank|canary]
[--attempts 4]``

The canary stream uses a real-bank canary only when the sandbox validation keeps it
(:func:`~forgegym.envs.bugfix.real_canaries.validate`), trying up to ``--attempts`` of a
task's contradictions in turn (:meth:`~forgegym.tasklib.canaries.CanaryBank.first_sound`,
design note 006, D4), so a detector that knows which tasks carry a *usable* canary scores
``0.5 + (1 - e_v) / 2``, ``e_v`` the share of tasks with a canary the validation keeps.
This takes ``--n`` tasks, validates each one's canaries as the stream does, and prints
both bounds (the plan's and the validated one), the latter for the plan's choice alone
and with the later tries. ``--rows bank``: the tasks
:func:`~forgegym.tasklib.canary_detect.collect` samples from the whole bank
(``bank.task_ids(n, seed)``, seed 1 as the detector benchmark's); ``--rows canary``:
the tasks ``make_dataset(..., canary_rate>0)`` draws its other rows from, those that
can carry a canary (D7; seed+1 as ``collect(..., eligible_rows=True)``). Results go to
``benchmarks/results/real_canary_eligibility[_canary_rows].json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.bugfix import real_canaries as rc
from forgegym.tasklib.canaries import MAX_CANARY_ATTEMPTS, canary_id

RESULTS = Path(__file__).parent / "results"


def _rows(bank: Any, canaries: Any, n: int, seed: int, rows: str) -> list[str]:
    if rows == "bank":
        return list(bank.task_ids(n, seed=seed))
    return list(canaries.eligible_task_ids(bank, n, seed=seed + 1))


def _bound(share: float) -> float:
    return 0.5 + (1 - share) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rows", choices=("bank", "canary"), default="bank")
    parser.add_argument("--attempts", type=int, default=MAX_CANARY_ATTEMPTS)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    suffix = "" if args.rows == "bank" else "_canary_rows"
    out_path = args.out or RESULTS / f"real_canary_eligibility{suffix}.json"
    start = time.perf_counter()
    env = gym.make("Forge/Bugfix-v0", max_steps=1, bank="real")
    inner: Any = env.unwrapped
    rows: dict[str, dict[str, Any]] = {}
    try:
        bank, canaries = inner.task_bank, inner.canary_bank()
        for task_id in _rows(bank, canaries, args.n, args.seed, args.rows):
            base = bank.unchecked(task_id)
            row: dict[str, Any] = {"planned": False, "sound_attempt": None, "tries": []}
            for attempt in range(args.attempts):
                params = canaries.plan_for(base, attempt)
                if params is None:
                    break
                row["planned"] = True
                sound, why = rc.validate(canary_id(task_id, attempt), bank, env=inner)
                row["tries"].append({"shape": params["shape"], "sound": sound, "why": why})
                if sound:
                    row["sound_attempt"] = attempt
                    break
            rows[task_id] = row
            print(task_id, row, flush=True)
    finally:
        env.close()
    count = len(rows)
    planned = sum(r["planned"] for r in rows.values()) / count
    first = sum(r["sound_attempt"] == 0 for r in rows.values()) / count
    sound = sum(r["sound_attempt"] is not None for r in rows.values()) / count
    out = {
        "rows": args.rows,
        "tasks": count,
        "attempts": args.attempts,
        "planned_share": planned,
        "validated_share_first_try": first,
        "validated_share": sound,
        "bound_planned": _bound(planned),
        "bound_validated_first_try": _bound(first),
        "bound_validated": _bound(sound),
        "validations": sum(len(r["tries"]) for r in rows.values()),
        "seconds": time.perf_counter() - start,
        "per_task": rows,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "per_task"}, indent=1))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
