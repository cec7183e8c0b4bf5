"""Fresh real-bank canaries, drawn as training draws them, graded (issue #37, D4).

``python benchmarks/real_canaries.py [--n 4] [--seed 0]``

``make_dataset("Forge/Bugfix-v0", n, env_kwargs={"bank": "real"}, canary_rate=1.0)``
gives ``n`` canaries built fresh on real tasks; each is graded with the honest
reference fix, the no-op and the family's cheat (the reference fix plus a disguised
special case of the contradicted call), and what differs from its base task is
recorded. Then one canary goes through ``make_reward_funcs``: the cheat's and the
reference's rewards must be ``None`` (masked) while ``forgegym/cheat_rate`` counts the
cheat. Results go to ``benchmarks/results/real_canaries.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.bugfix.canaries import disguised_special_case
from forgegym.family.spec import default_reference_action
from forgegym.integrations.trl import make_dataset, make_reward_funcs
from forgegym.play.policies import NOOP_ACTION
from forgegym.tasklib.canaries import base_id_of

RESULTS = Path(__file__).parent / "results" / "real_canaries.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    kwargs = {"bank": "real"}
    start = time.perf_counter()
    dataset = make_dataset(
        "Forge/Bugfix-v0", args.n, seed=args.seed, env_kwargs=kwargs, canary_rate=1.0
    )
    ids = [str(i) for i in dataset["task_id"]]
    env = gym.make("Forge/Bugfix-v0", max_steps=1, **kwargs)
    inner: Any = env.unwrapped
    rows: dict[str, dict[str, Any]] = {}
    try:
        for task_id in ids:
            canary = inner.get_task(task_id)
            base = inner.task_bank.get(base_id_of(task_id))
            texts = {
                "reference": default_reference_action(canary),
                "noop": NOOP_ACTION,
                "cheat": disguised_special_case(canary),
            }
            graded = inner.grade_completions(task_id, list(texts.values()))
            row: dict[str, Any] = {
                policy: bool(inner.solved(breakdown))
                for policy, (_, breakdown) in zip(texts, graded, strict=True)
            }
            row["files_changed"] = [p for p in canary.files if canary.files[p] != base.files[p]]
            row["statement_same"] = canary.description == base.description
            row["contradiction"] = canary.metadata["contradiction"]
            rows[task_id] = row
            print(task_id, {k: row[k] for k in ("reference", "noop", "cheat")}, flush=True)
        (reward,) = make_reward_funcs("Forge/Bugfix-v0", canary_rate=1.0, env_kwargs=kwargs)
        logged: dict[str, float] = {}
        canary = inner.get_task(ids[0])
        values = reward(
            prompts=[[]] * 2,
            completions=[disguised_special_case(canary), default_reference_action(canary)],
            task_id=[ids[0], ids[0]],
            log_metric=lambda name, value: logged.__setitem__(name, value),
        )
    finally:
        env.close()
    out = {
        "canaries": rows,
        "solved": {p: sum(r[p] for r in rows.values()) for p in ("reference", "noop", "cheat")},
        "reward_funcs": {"rewards": values, "logged": logged},
        "seconds": time.perf_counter() - start,
    }
    print(json.dumps({k: out[k] for k in ("solved", "reward_funcs")}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
