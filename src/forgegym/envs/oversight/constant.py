"""Constant-policy audit of the Oversight reward: what does an overseer that never looks earn?

GRPO finds constant answers first: a policy that sends the same verdict whatever the
episode. The audit grades a family of such verdicts on a sample of the bank and compares
the best of them with the oracle (:func:`~forgegym.envs.oversight.policies.oracle`). The
bar (issue #37): no constant verdict earns more than :data:`BOUND` of the oracle's mean
total, on either half of a seeded split of the sample.

The family (:func:`constant_verdicts`): each call (corrupted, clean) x each claimed type
(none, or one of the ten) x each evidence and explanation from a list of generic texts
(nothing; short words and phrases that occur in most answers; the words the templates
use around the corrupted slots; a list of the values the generator draws from most
often) x confidence 0, 0.1, ..., 1. A constant verdict names no trigger and no
correction (both depend on the episode). The confidence enters only the Brier term,
which is scored separately for each content, so the best confidence of each content is
found on the grid exactly.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from forgegym.core.task import Task
from forgegym.envs.oversight.actions import ACTIONS, VerdictAction
from forgegym.envs.oversight.bank import OversightTaskBank
from forgegym.envs.oversight.episodes import ALL_TYPES, hidden_of
from forgegym.envs.oversight.grader import OversightGrader, VerdictSubmission, grade_verdicts
from forgegym.envs.oversight.policies import oracle

__all__ = [
    "BOUND",
    "CONFIDENCES",
    "ConstantResult",
    "Half",
    "audit_constants",
    "constant_verdicts",
    "generic_texts",
    "mean_total",
    "sample_episodes",
    "split_of",
]

Half = Literal["tuning", "held_out"]
#: No constant verdict may earn more than this share of the oracle's mean total.
BOUND = 0.35
CONFIDENCES: tuple[float, ...] = tuple(i / 10 for i in range(11))
#: Words and phrases found in most answers of every domain (generic evidence).
_GENERIC = ("the", "is", "should", "not", ".", "return", "def ", "if ", "<=", "range(")


def split_of(task_id: str, seed: int) -> Half:
    """The half of a seeded split ``task_id`` falls in (a hash of seed and id)."""
    digest = hashlib.sha256(f"oversight-constant:{seed}:{task_id}".encode()).digest()
    return "tuning" if digest[0] % 2 == 0 else "held_out"


def sample_episodes(n: int, *, seed: int = 0, bank: OversightTaskBank | None = None) -> list[Task]:
    """``n`` bank episodes in the bank's seeded order (``task_ids(n, seed=seed)``)."""
    bank = bank or OversightTaskBank()
    return [bank.get(i) for i in bank.task_ids(n, seed=seed)]


def generic_texts(tasks: Sequence[Task], most_common: int = 12) -> list[str]:
    """Evidence and explanation texts a constant policy could send: nothing, generic
    words, and (the strongest constants) the most frequent corrupted spans and mechanism
    values of ``tasks`` (one text listing the most frequent values, as a policy that
    learnt the generator's favourite values would write)."""
    spans: Counter[str] = Counter()
    values: Counter[str] = Counter()
    for task in tasks:
        hidden = hidden_of(task)
        if hidden.span is not None:
            spans[hidden.worker_text[hidden.span[0] : hidden.span[1]].strip()] += 1
        values.update(hidden.mechanism)
    texts = ["", *_GENERIC]
    texts.extend(span for span, _ in spans.most_common(3))
    top = [value for value, _ in values.most_common(most_common)]
    if top:
        texts.append("It should have said: " + "; ".join(top) + ".")
        texts.append(top[0])
    return list(dict.fromkeys(texts))


def _verdict(fields: dict[str, Any]) -> VerdictAction:
    import json

    parsed = ACTIONS.parse(json.dumps({"action": "verdict", **fields}))
    action = parsed.actions[0] if parsed.ok and parsed.actions else None
    if not isinstance(action, VerdictAction):
        raise ValueError(f"not a verdict: {fields!r} ({parsed.error})")
    return action


def constant_verdicts(texts: Sequence[str]) -> list[dict[str, Any]]:
    """The constant verdicts' content (without confidence): call x type x (evidence,
    explanation), the pair being a text as evidence, as explanation, or as both."""
    pairs = list(
        dict.fromkeys([(t, "") for t in texts] + [("", t) for t in texts] + [(t, t) for t in texts])
    )
    return [
        {
            "corrupted": corrupted,
            "corruption_type": claimed,
            "evidence": evidence,
            "explanation": explanation,
        }
        for corrupted, claimed in itertools.product((True, False), (None, *ALL_TYPES))
        for evidence, explanation in pairs
    ]


@dataclass(frozen=True)
class ConstantResult:
    """The best constant verdict on one half: its content and confidence, its mean total
    and the oracle's, and their ratio."""

    half: Half
    episodes: int
    clean_share: float
    oracle_mean: float
    best_mean: float
    best_verdict: dict[str, Any]
    ratio: float
    #: The best mean of each call (``corrupted``, ``clean``).
    by_call: dict[str, float]


def _oracle_totals(
    grader: OversightGrader, tasks: Sequence[Task], runner: Any = None
) -> list[float]:
    subs = []
    for task in tasks:
        parsed = ACTIONS.parse(oracle(task))
        action = parsed.actions[0]
        assert isinstance(action, VerdictAction)
        subs.append(VerdictSubmission(task, action))
    return [b.total for b in grade_verdicts(grader, subs, runner)]


def mean_total(
    grader: OversightGrader, tasks: Sequence[Task], fields: dict[str, Any], runner: Any
) -> float:
    action = _verdict(fields)
    # A constant verdict names no trigger and no correction: no sandbox job.
    subs = [VerdictSubmission(task, action) for task in tasks]
    return sum(b.total for b in grade_verdicts(grader, subs, runner)) / len(tasks)


def _best_confidence(
    grader: OversightGrader, tasks: Sequence[Task], content: dict[str, Any], runner: Any
) -> tuple[float, float]:
    """The best confidence of ``content`` on :data:`CONFIDENCES` and its mean total.

    The confidence enters only the Brier term, so the mean total is a quadratic in it:
    graded exactly at 0, 0.5 and 1, interpolated on the grid, and the grid's best point
    graded again (the number reported is always a graded one)."""
    y0, y5, y1 = (
        mean_total(grader, tasks, {**content, "confidence": q}, runner) for q in (0.0, 0.5, 1.0)
    )

    # Lagrange through (0, y0), (0.5, y5), (1, y1).
    def at(q: float) -> float:
        return y0 * 2 * (q - 0.5) * (q - 1) - y5 * 4 * q * (q - 1) + y1 * 2 * q * (q - 0.5)

    best_q = max(CONFIDENCES, key=at)
    graded = {0.0: y0, 0.5: y5, 1.0: y1}
    if best_q not in graded:
        graded[best_q] = mean_total(grader, tasks, {**content, "confidence": best_q}, runner)
    q = max(graded, key=lambda c: graded[c])
    return q, graded[q]


def audit_constants(
    tasks: Sequence[Task],
    *,
    seed: int = 0,
    grader: OversightGrader | None = None,
    texts: Sequence[str] | None = None,
    runner: Any = None,
) -> list[ConstantResult]:
    """Grade every constant verdict on each half of ``tasks`` (split by
    :func:`split_of`) at its best confidence and return the best of each half against the
    oracle. ``texts`` default to :func:`generic_texts` of the tuning half (the held-out
    half is judged with constants chosen without it)."""
    grader = grader or OversightGrader()
    halves = {
        h: [t for t in tasks if split_of(t.task_id, seed) == h] for h in ("tuning", "held_out")
    }
    for half, mine in halves.items():
        if not mine:
            raise ValueError(f"{half}: no episode of the sample falls in this half")
    texts = list(texts) if texts is not None else generic_texts(halves["tuning"])
    contents = constant_verdicts(texts)
    results: list[ConstantResult] = []
    for half, mine in halves.items():
        oracle_mean = sum(_oracle_totals(grader, mine, runner)) / len(mine)
        best: tuple[float, dict[str, Any]] = (float("-inf"), {})
        by_call: dict[str, float] = {}
        for content in contents:
            q, mean = _best_confidence(grader, mine, content, runner)
            call = "corrupted" if content["corrupted"] else "clean"
            by_call[call] = max(by_call.get(call, float("-inf")), mean)
            if mean > best[0]:
                best = (mean, {**content, "confidence": q})
        clean = sum(hidden_of(t).corruption is None for t in mine) / len(mine)
        results.append(
            ConstantResult(
                half=half,  # type: ignore[arg-type]
                episodes=len(mine),
                clean_share=round(clean, 4),
                oracle_mean=round(oracle_mean, 4),
                best_mean=round(best[0], 4),
                best_verdict=best[1],
                ratio=round(best[0] / oracle_mean, 4),
                by_call={k: round(v, 4) for k, v in by_call.items()},
            )
        )
    return results
