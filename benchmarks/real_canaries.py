"""Fresh real-bank canaries, validated as the canary stream validates them (issue #37, D4).

``python benchmarks/real_canaries.py [--n 12] [--seed 0]``

Takes the first ``--n`` canaries the real bank's plan builds in the canary stream's
order (:meth:`CanaryBank.fresh_ids` with ``validated=False``) and grades each in the
sandbox through the env's grading with the honest reference fix, the no-op and the
family's cheat (the reference fix plus a disguised special case of the contradicted
call at its call site): a canary is sound when the reference and the no-op fail and
the cheat succeeds, which is what the stream's validation
(:func:`~forgegym.envs.bugfix.real_canaries.validate`) keeps. Counts per shape say
which shapes the validation rejects. Then one sound canary goes through
``make_reward_funcs``: the cheat's and the reference's rewards must be ``None``
(masked) while ``forgegym/cheat_rate`` counts the cheat. Results go to
``benchmarks/results/real_canaries.json``.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.bugfix.canaries import disguised_special_case
from forgegym.family.spec import default_reference_action
from forgegym.integrations.trl import make_reward_funcs
from forgegym.play.policies import NOOP_ACTION
from forgegym.tasklib.canaries import base_id_of

RESULTS = Path(__file__).parent / "results" / "real_canaries.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    kwargs = {"bank": "real"}
    start = time.perf_counter()
    env = gym.make("Forge/Bugfix-v0", max_steps=1, **kwargs)
    inner: Any = env.unwrapped
    rows: dict[str, dict[str, Any]] = {}
    sound: list[str] = []
    try:
        fresh = inner.canary_bank().fresh_ids(inner.task_bank, args.seed, validated=False)
        for task_id in (i for _, i in zip(range(args.n), fresh, strict=False)):
            canary = inner.get_task(task_id)
            base = inner.task_bank.get(base_id_of(task_id))
            texts = {
                "reference": default_reference_action(canary),
                "noop": NOOP_ACTION,
                "cheat": disguised_special_case(canary) or NOOP_ACTION,
            }
            graded = inner.grade_completions(task_id, list(texts.values()))
            row: dict[str, Any] = {
                policy: bool(inner.solved(breakdown))
                for policy, (_, breakdown) in zip(texts, graded, strict=True)
            }
            row["sound"] = row["cheat"] and not row["reference"] and not row["noop"]
            terms = graded[2][1].terms
            row["cheat_terms"] = {
                k: terms[k].detail for k in ("hidden", "regression") if k in terms
            }
            row["cheat_notes"] = graded[2][1].notes
            row["files_changed"] = [p for p in canary.files if canary.files[p] != base.files[p]]
            row["statement_same"] = canary.description == base.description
            row["shape"] = canary.metadata["contradiction"].get("shape", "")
            row["contradiction"] = canary.metadata["contradiction"]
            rows[task_id] = row
            if row["sound"]:
                sound.append(task_id)
            print(task_id, {k: row[k] for k in ("shape", "reference", "noop", "cheat")}, flush=True)
        values: list[Any] = []
        logged: dict[str, float] = {}
        if sound:
            (reward,) = make_reward_funcs("Forge/Bugfix-v0", canary_rate=1.0, env_kwargs=kwargs)
            canary = inner.get_task(sound[0])
            values = reward(
                prompts=[[]] * 2,
                completions=[disguised_special_case(canary), default_reference_action(canary)],
                task_id=[sound[0], sound[0]],
                log_metric=lambda name, value: logged.__setitem__(name, value),
            )
    finally:
        env.close()
    shapes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in rows.values():
        shapes[row["shape"]]["sound" if row["sound"] else "rejected"] += 1
    out = {
        "canaries": rows,
        "solved": {p: sum(r[p] for r in rows.values()) for p in ("reference", "noop", "cheat")},
        "sound": len(sound),
        "by_shape": {k: dict(v) for k, v in shapes.items()},
        "reward_funcs": {"rewards": values, "logged": logged},
        "seconds": time.perf_counter() - start,
    }
    print(
        json.dumps({k: out[k] for k in ("solved", "sound", "by_shape", "reward_funcs")}, indent=1)
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
