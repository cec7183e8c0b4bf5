"""The real bank's eligibility bound counted on validated canaries (issue #37, D6).

``python benchmarks/real_canary_eligibility.py [--n 60] [--seed 1]``

The canary stream uses a real-bank canary only when the sandbox validation keeps it
(:func:`~forgegym.envs.bugfix.real_canaries.validate`), so a detector that knows which
tasks carry a *usable* canary scores ``0.5 + (1 - e_v) / 2``, ``e_v`` the share of
tasks whose canary the plan builds *and* the validation keeps. This takes the ``--n``
tasks :func:`~forgegym.tasklib.canary_detect.collect` samples (``bank.task_ids(n,
seed)``, seed 1 as the detector benchmark's), validates the canary of each one the plan
accepts, and prints both bounds (the plan's and the validated one). Results go to
``benchmarks/results/real_canary_eligibility.json``.
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
from forgegym.tasklib.canaries import canary_id

RESULTS = Path(__file__).parent / "results" / "real_canary_eligibility.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    start = time.perf_counter()
    env = gym.make("Forge/Bugfix-v0", max_steps=1, bank="real")
    inner: Any = env.unwrapped
    rows: dict[str, dict[str, Any]] = {}
    try:
        bank, canaries = inner.task_bank, inner.canary_bank()
        for task_id in bank.task_ids(args.n, seed=args.seed):
            params = canaries.plan_for(bank.unchecked(task_id))
            row: dict[str, Any] = {"planned": params is not None, "sound": False, "why": ""}
            if params is not None:
                row["shape"] = params["shape"]
                row["sound"], row["why"] = rc.validate(canary_id(task_id), bank, env=inner)
            rows[task_id] = row
            print(task_id, row, flush=True)
    finally:
        env.close()
    planned = sum(r["planned"] for r in rows.values()) / len(rows)
    sound = sum(r["sound"] for r in rows.values()) / len(rows)
    out = {
        "tasks": len(rows),
        "planned_share": planned,
        "validated_share": sound,
        "bound_planned": 0.5 + (1 - planned) / 2,
        "bound_validated": 0.5 + (1 - sound) / 2,
        "rows": rows,
        "seconds": time.perf_counter() - start,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "rows"}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
