"""Refactor's, Performance's, FlakyRepair's and Oversight's rewards on a fixed sample
(issue 35: one family shape must not move a reward).

Grades, through the public API (``gym.make`` and ``env.unwrapped.grade_completions``,
on the optimised and on the reference path), a fixed set of completions on a few tasks
of each family's generated bank: the reference action, the partial action where the
family has one, the no-op, every registered hack and (Oversight) every baseline.
Bugfix's banks and repository mode have their own samples
(``benchmarks/bugfix_rewards.py``, ``benchmarks/repo_mode_rewards.py``).

Performance's reward is measured (CPU time, scaling exponents; its family declares a
``reward_tolerance``) on hidden traces drawn afresh for each grading, so for a family
with a tolerance only what must not move is written: the success verdict, validity,
gates, the scanner's findings and each term's name, kind and weight. The breakdowns are written as JSON, so two runs (before and after
a refactoring) can be compared byte for byte::

    python benchmarks/family_rewards.py --family refactor --out before.json
    python benchmarks/family_rewards.py --family refactor --out after.json
    cmp before.json after.json

``tests/envs/test_family_rewards.py`` compares a run with the committed
``tests/fixtures/<family>_rewards.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import gymnasium as gym

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.task import Task
from forgegym.family import get_family
from forgegym.play.policies import NOOP_ACTION

#: The sampled tasks of each family's generated bank.
SAMPLES: dict[str, tuple[str, ...]] = {
    "refactor": ("refactor/dead_code/anagrams/d1v0", "refactor/rename_alias/dedupe/d2v2"),
    "performance": ("performance/indexed_heap/bug3/balanced",),
    "flaky": ("flaky/async_wait/fire_and_forget/d1/0", "flaky/non_idempotent/init/d3/1"),
    "oversight": ("oversight/code/0", "oversight/customer_support/94"),
}


def completions(family: str, task: Task) -> dict[str, str]:
    """The reference, partial (where defined), no-op, hacks and baselines of ``task``."""
    spec = get_family(family)
    out = {"reference": spec.reference_action()(task), "noop": NOOP_ACTION}
    partial = spec.partial_action()
    if partial is not None and (text := partial(task)) is not None:
        out["partial"] = text
    for group in (spec.hack_actions(), spec.baseline_actions()):
        for name, policy in group.items():
            if (text := policy(task)) is not None:
                out[name] = text
    return out


def grade_family(family: str) -> dict[str, Any]:
    """``{task: {path: {completion: {reward, breakdown}}}}`` for ``family``'s sample."""
    spec = get_family(family)
    bank = spec.make_task_bank()
    tasks = [bank.get(task_id) for task_id in SAMPLES[family]]
    measured = spec.reward_tolerance > 0
    out: dict[str, Any] = {}
    for optimised in (True, False):
        env = gym.make(spec.env_ids[0], max_steps=1, optimised_grading=optimised)
        try:
            for task in tasks:
                texts = completions(family, task)
                graded = env.unwrapped.grade_completions(task.task_id, list(texts.values()))
                dumped: dict[str, Any] = {}
                for name, (reward, breakdown) in zip(texts, graded, strict=True):
                    dumped[name] = (
                        _verdict(spec.is_solved(breakdown), breakdown.model_dump(mode="json"))
                        if measured
                        else {"reward": reward, "breakdown": breakdown.model_dump(mode="json")}
                    )
                out.setdefault(task.task_id, {})["optimised" if optimised else "reference"] = dumped
        finally:
            env.close()
    return out


def _verdict(solved: bool, breakdown: dict[str, Any]) -> dict[str, Any]:
    """What of a measured family's breakdown does not depend on measured time or on the
    traces drawn afresh for each grading: the success verdict, validity, gates, the
    scanner's findings (``hack:`` notes) and each term's name, kind and weight."""
    return {
        "solved": solved,
        "valid": breakdown["valid"],
        "invalid_cause": breakdown["invalid_cause"],
        "gates": breakdown["gates"],
        "hack_notes": [note for note in breakdown["notes"] if note.startswith("hack:")],
        "terms": {
            name: {"kind": term["kind"], "weight": term["weight"]}
            for name, term in breakdown["terms"].items()
        },
    }


def grade_sample(family: str) -> dict[str, Any]:
    """The sample of ``family``: ``{"bank": {task: {path: {completion: ...}}}}``."""
    return {"bank": grade_family(family)}


def to_text(sample: dict[str, Any]) -> str:
    """The JSON text compared byte for byte."""
    return json.dumps(sample, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=sorted(SAMPLES), required=True)
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    args = parser.parse_args()
    args.out.write_text(to_text(grade_sample(args.family)), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
