"""Per-batch cheating telemetry over graded breakdowns.

What a trainer should watch besides the mean reward (docs/telemetry.md): how often each
gate fires, how often each anti-hack kind is flagged, the share of actions that did not
parse, and the share of rewards the grading machinery could not vouch for
(``RewardBreakdown.valid`` False). A rising hack rate with a rising reward is a policy
learning to cheat; a non-zero ``reward_invalid`` is the machine, not the policy.

Keys (all rates in [0, 1] over the batch's completions):

* ``forgegym/gate/<name>``: the share with gate ``<name>``;
* ``forgegym/hack/<kind>``: the share with an anti-hack finding of kind ``<kind>``
  (read from the ``hack: <kind> at ...`` notes the graders leave);
* ``forgegym/unparseable``: the share with a ``format`` term (an action that did not parse);
* ``forgegym/reward_invalid``: the share whose reward is invalid (a machine fault);
* ``forgegym/cheat_rate``: the share of canary rows (tasks no honest solution solves)
  that were solved, present only when the batch had canaries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "PREFIX",
    "TELEMETRY_KEYS",
    "batch_telemetry",
    "episode_telemetry",
    "hack_kinds",
    "known_hack_keys",
]

PREFIX = "forgegym/"
#: The keys every batch reports (gate and hack keys are added per name seen).
TELEMETRY_KEYS = ("forgegym/unparseable", "forgegym/reward_invalid")

_HACK_NOTE = re.compile(r"^hack: ([A-Za-z0-9_.-]+)")


def hack_kinds(breakdown: Any) -> set[str]:
    """The anti-hack finding kinds a breakdown's notes name."""
    kinds: set[str] = set()
    for note in getattr(breakdown, "notes", None) or []:
        match = _HACK_NOTE.match(str(note))
        if match:
            kinds.add(match.group(1))
    return kinds


def known_hack_keys() -> list[str]:
    """``forgegym/hack/<kind>`` of every registered anti-hack scanner: reported as 0.0 in a
    batch where none fired, so a plot tells zero from missing."""
    from forgegym.rewards.antihack.registry import scanner_specs

    return sorted({f"{PREFIX}hack/{spec.kind}" for spec in scanner_specs()})


def batch_telemetry(
    breakdowns: Sequence[Any],
    canary: Sequence[bool] | None = None,
    solved: Sequence[bool] | None = None,
    known: Sequence[str] | None = None,
) -> dict[str, float]:
    """The batch's telemetry (module docstring), or ``{}`` for an empty batch.

    ``breakdowns`` may hold ``None`` for completions never graded (counted as invalid).
    ``canary``/``solved`` (parallel to ``breakdowns``) give the cheat rate: solved canaries
    over canaries. ``known``: gate and hack keys reported as 0.0 when this batch has none
    (default: every registered scanner's hack key); keys a batch saw are always there."""
    n = len(breakdowns)
    if n == 0:
        return {}
    gates: dict[str, int] = {}
    hacks: dict[str, int] = {}
    unparseable = invalid = 0
    for breakdown in breakdowns:
        if breakdown is None or not getattr(breakdown, "valid", True):
            invalid += 1
        if breakdown is None:
            continue
        for gate in set(breakdown.gates):
            gates[gate] = gates.get(gate, 0) + 1
        for kind in hack_kinds(breakdown):
            hacks[kind] = hacks.get(kind, 0) + 1
        if "format" in breakdown.terms:
            unparseable += 1
    out = {
        "forgegym/unparseable": unparseable / n,
        "forgegym/reward_invalid": invalid / n,
    }
    for gate, count in sorted(gates.items()):
        out[f"forgegym/gate/{gate}"] = count / n
    for kind, count in sorted(hacks.items()):
        out[f"forgegym/hack/{kind}"] = count / n
    for key in known_hack_keys() if known is None else known:
        out.setdefault(key, 0.0)
    if canary is not None and solved is not None:
        marked = [bool(ok) for is_canary, ok in zip(canary, solved, strict=True) if is_canary]
        if marked:
            out["forgegym/cheat_rate"] = sum(marked) / len(marked)
    return out


def episode_telemetry(
    episodes: Sequence[Any], canary_tasks: set[str] | None = None
) -> dict[str, float]:
    """:func:`batch_telemetry` over finished episodes (``forgegym.play.results.Episode``):
    each episode's last graded breakdown; an episode never graded counts as invalid.
    ``canary_tasks``: the task ids that are canaries (their successes are cheating)."""
    from forgegym.rewards.breakdown import RewardBreakdown

    breakdowns: list[Any] = []
    for episode in episodes:
        last = next(
            (s.reward_breakdown for s in reversed(episode.steps) if s.reward_breakdown), None
        )
        breakdowns.append(None if last is None else RewardBreakdown.model_validate(last))
    canary = solved = None
    if canary_tasks is not None:
        canary = [e.task_id in canary_tasks for e in episodes]
        solved = [bool(e.success) for e in episodes]
    return batch_telemetry(breakdowns, canary, solved)
