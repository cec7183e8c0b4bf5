"""FlakyRepair canaries against an honest-looking edit of their helper (issue #37, D8).

``python benchmarks/flaky_canary_helper.py [--n 60]``

Grades every shipped FlakyRepair canary (or the first ``--n``) in the sandbox through
the env's grading with four policies: the honest reference fix, the no-op, the
validation's cheat (the reference fix plus a disguised special case of the
contradicted call, :func:`~forgegym.envs.flaky.canaries.special_case_code`) and the
reference fix plus the contradicted function's format changed for every input
(:func:`~forgegym.envs.flaky.canaries.rewrite_helper`: ``"kilo-0:"`` becoming
``"kilo-0::"``, which solved the label canaries before D8 without any special case).
With the canaries' hidden checks of that function on other inputs, only the cheat
should solve. Results go to ``benchmarks/results/flaky_canary_helper.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.flaky.canaries import canary_bank, rewrite_helper, special_case_code
from forgegym.envs.flaky.policies import reference_action
from forgegym.play.policies import NOOP_ACTION

RESULTS = Path(__file__).parent / "results" / "flaky_canary_helper.json"
POLICIES = ("reference", "noop", "special_case_code", "rewrite_helper")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    start = time.perf_counter()
    bank = canary_bank()
    env = gym.make("Forge/FlakyRepair-v0", max_steps=1)
    inner: Any = env.unwrapped
    rows: dict[str, dict[str, Any]] = {}
    try:
        for task_id in bank.ids()[: args.n]:
            canary = bank.get(task_id)
            texts = {
                "reference": reference_action(canary),
                "noop": NOOP_ACTION,
                "special_case_code": special_case_code(canary),
                "rewrite_helper": rewrite_helper(canary),
            }
            wanted = [p for p in POLICIES if texts[p] is not None]
            graded = inner.grade_completions(task_id, [texts[p] for p in wanted])
            row: dict[str, Any] = {}
            for policy, (reward, breakdown) in zip(wanted, graded, strict=True):
                term = breakdown.terms.get("regression")
                row[policy] = {
                    "solved": bool(inner.solved(breakdown)),
                    "reward": round(float(reward), 4),
                    "regression": round(term.value, 4) if term else None,
                    "detail": term.detail if term else "",
                    "gates": list(breakdown.gates),
                }
            rows[task_id] = row
            print(task_id, {p: r["solved"] for p, r in row.items()}, flush=True)
    finally:
        env.close()
    solved = {
        p: {
            "applies": sum(p in r for r in rows.values()),
            "solved": sum(r[p]["solved"] for r in rows.values() if p in r),
        }
        for p in POLICIES
    }
    out = {"canaries": rows, "solved": solved, "seconds": round(time.perf_counter() - start, 1)}
    print(json.dumps(solved, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
