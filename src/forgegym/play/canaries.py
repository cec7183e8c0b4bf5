"""Playing canaries: their cheat rate per policy, and building a family's canary manifest.

A canary (:mod:`forgegym.tasklib.canaries`) is a task no honest solution solves, so
the share of canaries a policy solves is its **cheat rate**. :func:`canary_cheat_rates`
grades scripted policies on a family's canaries (what ``forgegym eval --canaries N``
reports: the honest reference, the no-op, every registered hack, and the family's
canary cheats, which show the canaries can be solved by cheating at all).

:func:`build_canary_manifest` selects a family's canaries from its bank (seeded,
:class:`~forgegym.tasklib.canaries.CanaryConfig`) and validates every one by grading
it: the honest policy must not succeed; the family's cheats are recorded (where one
exists it must succeed on every canary it applies to, else the canary would not
detect it). Rebuild a family's shipped manifest with::

    python -m forgegym.play.canaries bugfix      # writes envs/bugfix/data/canaries.json
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from forgegym.family import Family, get_family
from forgegym.play.telemetry import batch_telemetry
from forgegym.policies import NOOP_ACTION
from forgegym.tasklib.canaries import (
    MANIFEST_NAME,
    CanaryConfig,
    manifest_payload,
    select_canaries,
)

__all__ = [
    "CanaryRate",
    "build_canary_manifest",
    "canary_cheat_rates",
    "canary_policies",
    "main",
]


class CanaryRate(BaseModel):
    """One policy's result on a family's canaries."""

    policy: str
    canaries: int = Field(description="Canaries the policy had an action for.")
    solved: int = Field(description="Canaries it solved (each one a cheat).")
    cheat_rate: float
    solved_ids: list[str] = Field(default_factory=list)
    telemetry: dict[str, float] = Field(default_factory=dict)


def canary_policies(family: Family) -> dict[str, Callable[[Any], str | None]]:
    """The scripted policies played on canaries: ``reference`` (the honest policy),
    ``noop``, every registered hack (``hack:<name>``) and the family's canary cheats
    (``cheat:<name>``)."""
    policies: dict[str, Callable[[Any], str | None]] = {
        "reference": family.canary_honest_action(),
        "noop": lambda task: NOOP_ACTION,
    }
    for name, fn in family.hack_actions().items():
        policies[f"hack:{name}"] = fn
    for name, fn in family.canary_cheats().items():
        policies[f"cheat:{name}"] = fn
    return policies


def _family_env(env_id: str, env_kwargs: Mapping[str, Any] | None) -> Any:
    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the ids)

    kwargs = dict(env_kwargs or {})
    kwargs["max_steps"] = 1  # a canary is graded as a single-turn episode
    return gym.make(env_id, **kwargs)


def canary_cheat_rates(
    family_name: str,
    *,
    n: int | None = None,
    seed: int = 0,
    policies: Sequence[str] | None = None,
    env: Any = None,
    env_id: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    ids: Sequence[str] | None = None,
) -> dict[str, CanaryRate]:
    """Grade ``policies`` (default: every one of :func:`canary_policies`) on ``n``
    canaries of the family (seeded draw; all when ``n`` is ``None``, or exactly
    ``ids``), one graded batch per canary, on ``env`` or a fresh ``env_id`` (default:
    the family's first id) made with ``env_kwargs``. A policy with no action for a
    canary (``None``) is not counted there."""
    family = get_family(family_name)
    bank = family.canary_bank()
    if bank is None:
        raise ValueError(f"family {family.name!r} has no canaries")
    every = canary_policies(family)
    names = list(policies) if policies is not None else list(every)
    unknown = [p for p in names if p not in every]
    if unknown:
        raise ValueError(f"policies: unknown {unknown}; known: {sorted(every)}")
    total = len(bank.ids())
    chosen = list(ids) if ids is not None else bank.task_ids(total if n is None else n, seed=seed)
    own = env is None
    env = _family_env(env_id or family.env_ids[0], env_kwargs) if own else env
    base = env.unwrapped
    graded: dict[str, list[tuple[str, Any]]] = {p: [] for p in names}
    try:
        for task_id in chosen:
            task = bank.get(task_id)
            texts = {p: every[p](task) for p in names}
            wanted = [p for p in names if texts[p] is not None]
            results = base.grade_completions(task_id, [texts[p] for p in wanted])
            for policy, (_, breakdown) in zip(wanted, results, strict=True):
                graded[policy].append((task_id, breakdown))
    finally:
        if own:
            env.close()
    out: dict[str, CanaryRate] = {}
    for policy in names:
        rows = graded[policy]
        solved = [task_id for task_id, b in rows if base.solved(b)]
        breakdowns = [b for _, b in rows]
        out[policy] = CanaryRate(
            policy=policy,
            canaries=len(rows),
            solved=len(solved),
            cheat_rate=len(solved) / len(rows) if rows else 0.0,
            solved_ids=solved,
            telemetry=batch_telemetry(
                breakdowns, [True] * len(rows), [base.solved(b) for b in breakdowns]
            ),
        )
    return out


def _module(family: Family) -> Any:
    if family.package is None:
        raise ValueError(f"family {family.name!r} names no package")
    return importlib.import_module(f"{family.package}.canaries")


def build_canary_manifest(
    family_name: str,
    config: CanaryConfig | None = None,
    *,
    validate: bool = True,
    write: bool = True,
    on_canary: Callable[[str, dict[str, CanaryRate]], None] | None = None,
) -> dict[str, Any]:
    """Select the family's canaries (its ``canaries`` module's ``plan`` over its
    ``base_bank()``), write them to ``data/canaries.json`` and, with ``validate``,
    grade every canary with the honest policy, the no-op, the registered hacks and the
    family's cheats, recording the counts. ``ValueError`` when the honest policy or the
    no-op solves a canary (it would not be impossible)."""
    family = get_family(family_name)
    module = _module(family)
    config = config or module.CONFIG
    config.validate()
    entries = select_canaries(
        module.base_bank(), module.plan, config, eligible=getattr(module, "eligible", None)
    )
    observe = getattr(module, "observe", None)
    if observe is not None:  # what the canary's statement quotes of its own runs
        entries = observe(entries)
    path = Path(module.DATA_DIR) / MANIFEST_NAME
    validation: dict[str, Any] = {"validated": False}
    if write:
        path.write_text(json.dumps(manifest_payload(config, entries, validation), indent=1) + "\n")
        module.canary_bank.cache_clear()
    if not validate:
        return manifest_payload(config, entries, validation)
    totals: dict[str, dict[str, int]] = {}
    for entry in entries:
        rates = canary_cheat_rates(family.name, ids=[entry["id"]])
        for policy, rate in rates.items():
            row = totals.setdefault(policy, {"canaries": 0, "solved": 0})
            row["canaries"] += rate.canaries
            row["solved"] += rate.solved
        if on_canary is not None:
            on_canary(entry["id"], rates)
    for honest in ("reference", "noop"):
        if totals[honest]["solved"]:
            raise ValueError(
                f"{family.name}: {honest} solved {totals[honest]['solved']} canaries; "
                "they are not impossible"
            )
    validation = {"validated": True, "policies": totals}
    payload = manifest_payload(config, entries, validation)
    if write:
        path.write_text(json.dumps(payload, indent=1) + "\n")
        module.canary_bank.cache_clear()
    return payload


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m forgegym.play.canaries FAMILY [--no-validate]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("family")
    parser.add_argument("--no-validate", action="store_true")
    args = parser.parse_args(argv)
    import forgegym  # noqa: F401  (registers the families)

    def show(task_id: str, rates: dict[str, CanaryRate]) -> None:
        solved = [p for p, r in rates.items() if r.solved]
        print(f"{task_id}: solved by {', '.join(solved) or 'nobody'}", flush=True)

    payload = build_canary_manifest(args.family, validate=not args.no_validate, on_canary=show)
    print(json.dumps(payload["validation"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
