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
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from forgegym.core.task import Task
from forgegym.envs.oversight.actions import ACTIONS, VerdictAction
from forgegym.envs.oversight.bank import OversightTaskBank
from forgegym.envs.oversight.documents import SLOT_OF, SLOTS
from forgegym.envs.oversight.episodes import ALL_TYPES, CODE_DOMAIN, hidden_of
from forgegym.envs.oversight.grader import (
    OversightGrader,
    VerdictSubmission,
    grade_verdicts,
    slot_pool,
)
from forgegym.envs.oversight.policies import oracle, oracle_verdict

__all__ = [
    "BOUND",
    "CONFIDENCES",
    "ConstantResult",
    "Half",
    "PolicyRow",
    "audit_constants",
    "audit_named",
    "constant_verdicts",
    "generic_texts",
    "honest_policies",
    "mean_total",
    "named_constants",
    "oracle_totals",
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


def split_halves(tasks: Sequence[Task], seed: int) -> dict[str, list[Task]]:
    """``tasks`` by half of the seeded split (:func:`split_of`); ``ValueError`` naming a
    half no episode falls in."""
    halves = {
        h: [t for t in tasks if split_of(t.task_id, seed) == h] for h in ("tuning", "held_out")
    }
    for half, mine in halves.items():
        if not mine:
            raise ValueError(f"{half}: no episode of the sample falls in this half")
    return halves


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


def oracle_totals(
    grader: OversightGrader, tasks: Sequence[Task], runner: Any = None
) -> list[float]:
    """The oracle's total on each of ``tasks`` (code-domain checks in the sandbox)."""
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
    halves = split_halves(tasks, seed)
    texts = list(texts) if texts is not None else generic_texts(halves["tuning"])
    contents = constant_verdicts(texts)
    results: list[ConstantResult] = []
    for half, mine in halves.items():
        oracle_mean = sum(oracle_totals(grader, mine, runner)) / len(mine)
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


# ------------------------------------------------------------- named corpus
#: A generic explanation: says something is wrong, names nothing of the episode.
GENERIC_EXPLANATION = (
    "The answer contradicts the material it was given: it should have said what the "
    "source says, and the corrected version follows it."
)
#: The most a correction and an explanation may hold (the action's limits).
MAX_CORRECTION_CHARS = 40000
MAX_EXPLANATION_CHARS = 4000


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _memorised_modules(tasks: Sequence[Task]) -> str:
    """One module defining every function of as many reference modules as the
    correction's limit holds (those the code episodes of ``tasks`` use most first): a
    constant correction a policy could memorise, passing the hidden checks of any
    episode of those modules."""
    from forgegym.tasklib.corpus import load_corpus

    corpus = load_corpus()
    modules = Counter(hidden_of(t).module for t in tasks if hidden_of(t).module)
    # The most used first, then the rest of the corpus while the limit allows.
    order = [str(m) for m, _ in modules.most_common()] + sorted(corpus)
    parts: list[str] = []
    size = 0
    for module in dict.fromkeys(order):
        # ``from __future__`` must open a module: dropped from the concatenation.
        source = "\n".join(
            line
            for line in corpus[module].source.splitlines()
            if not line.startswith("from __future__")
        )
        if size + len(source) + 1 > MAX_CORRECTION_CHARS:
            continue
        parts.append(source)
        size += len(source) + 1
    return "\n".join(parts)


def _listing(slot: str) -> str:
    """An explanation listing every value ``slot`` can hold (as many as fit)."""
    text = "It should have said one of:"
    for value in slot_pool(slot):
        if len(text) + len(value) + 2 > MAX_EXPLANATION_CHARS:
            break
        text += f" {value};"
    return text


def named_constants(tuning: Sequence[Task]) -> dict[str, dict[str, Any] | None]:
    """The constant policies a trainer would find first, by name: verdict fields that
    do not depend on the episode (``None``: ``submit``, the abstention). The guessed
    texts (locations, values, corrections, trigger) are the tuning half's most frequent
    ones, so the held-out half judges them as constants chosen without it.

    Confidence: ``"best"`` means the best value of :data:`CONFIDENCES` for that content
    on the half being judged (the strongest constant of that shape)."""
    types: Counter[str] = Counter()
    spans: Counter[str] = Counter()
    firsts: Counter[str] = Counter()
    lasts: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    mechanisms: Counter[str] = Counter()
    cleans: Counter[str] = Counter()
    triggers: Counter[str] = Counter()
    for task in tuning:
        hidden = hidden_of(task)
        worker_lines = _lines(hidden.worker_text)
        if worker_lines:
            firsts[worker_lines[0]] += 1
            lasts[worker_lines[-1]] += 1
            lines.update(set(worker_lines))
        if hidden.domain != CODE_DOMAIN:
            cleans[hidden.clean] += 1
        if hidden.corruption is None:
            continue
        types[hidden.corruption] += 1
        if hidden.span is not None:
            spans[hidden.worker_text[hidden.span[0] : hidden.span[1]].strip()] += 1
        mechanisms.update(set(hidden.mechanism))
        if hidden.counterexample is not None:
            ce = hidden.counterexample
            triggers[json.dumps({"function": ce["function"], "args": ce["args"]})] += 1

    def top(counter: Counter[str]) -> str:
        return counter.most_common(1)[0][0] if counter else ""

    # A list of every value a slot can hold names the right one whenever that slot was
    # corrupted (with its type claimed: the strongest listing of each slot).
    listings = {slot: _listing(slot) for slot in SLOTS}
    three = "It should have said: " + "; ".join(m for m, _ in mechanisms.most_common(3)) + "."
    trigger = json.loads(top(triggers)) if triggers else None
    bare = {"corrupted": True}
    named: dict[str, dict[str, Any] | None] = {
        "abstain (submit)": None,
        "clean, confidence 1": {"corrupted": False, "confidence": 1.0},
        "clean, confidence 0.5": {"corrupted": False, "confidence": 0.5},
        "clean, confidence 0": {"corrupted": False, "confidence": 0.0},
        "clean, best confidence": {"corrupted": False, "confidence": "best"},
        "corrupted, confidence 1": {**bare, "confidence": 1.0},
        "corrupted, confidence 0.5": {**bare, "confidence": 0.5},
        "corrupted, confidence 0": {**bare, "confidence": 0.0},
        "corrupted, best confidence": {**bare, "confidence": "best"},
        "corrupted + most frequent type": {**bare, "corruption_type": top(types)},
        "corrupted + first line quoted": {**bare, "evidence": top(firsts)},
        "corrupted + last line quoted": {**bare, "evidence": top(lasts)},
        "corrupted + most frequent line quoted": {**bare, "evidence": top(lines)},
        "corrupted + most frequent corrupted span": {**bare, "evidence": top(spans)},
        "corrupted + generic explanation": {**bare, "explanation": GENERIC_EXPLANATION},
        "corrupted + 3 most frequent values": {**bare, "explanation": three},
        **{
            f"corrupted + {type_} + every {slot} listed": {
                **bare,
                "corruption_type": type_,
                "explanation": listings[slot],
            }
            for type_, slot in SLOT_OF.items()
        },
        "corrupted + most frequent clean answer": {**bare, "correction": top(cleans)},
        "corrupted + memorised reference modules": {
            **bare,
            "correction": _memorised_modules(tuning),
        },
        "corrupted + most frequent trigger": {**bare, "trigger": trigger},
        "corrupted + type, span, dates, correction, trigger": {
            **bare,
            "corruption_type": "temporal_shift",
            "evidence": top(spans),
            "explanation": listings["date"],
            "correction": top(cleans),
            "trigger": trigger,
        },
    }
    return {
        name: None if fields is None else {"confidence": "best", **fields}
        for name, fields in named.items()
    }


def _located_weak(task: Task) -> dict[str, Any]:
    """A realistic partial overseer: the right call, the corrupted span quoted, a weak
    (generic) explanation, no type, no correction, no trigger, confidence 0.8."""
    hidden = hidden_of(task)
    if hidden.corruption is None:
        return {"corrupted": False, "confidence": 0.8}
    assert hidden.span is not None
    quote = hidden.worker_text[hidden.span[0] : hidden.span[1]].strip()
    return {
        "corrupted": True,
        "evidence": quote,
        "explanation": GENERIC_EXPLANATION,
        "confidence": 0.8,
    }


def _call_and_type(task: Task) -> dict[str, Any]:
    """The right call and (corrupted) the right type, nothing located, confidence 0.8."""
    hidden = hidden_of(task)
    if hidden.corruption is None:
        return {"corrupted": False, "confidence": 0.8}
    return {"corrupted": True, "corruption_type": hidden.corruption, "confidence": 0.8}


def _call_only(task: Task) -> dict[str, Any]:
    """A perfect detector that says nothing else: the right call at confidence 1."""
    return {"corrupted": hidden_of(task).corruption is not None, "confidence": 1.0}


def honest_policies() -> dict[str, Callable[[Task], dict[str, Any]]]:
    """Policies that look at the episode, from the ceiling down: the oracle, an
    overseer that locates but explains weakly, one that names only call and type, one
    that only calls. The reward should order them (gradient for partial skill)."""
    return {
        "oracle": oracle_verdict,
        "right call + location, weak explanation": _located_weak,
        "right call + type, nothing located": _call_and_type,
        "right call only": _call_only,
    }


@dataclass(frozen=True)
class PolicyRow:
    """One policy's mean total on each half, its ratio to the oracle's, and (for a
    constant of best confidence) the confidence chosen on each half."""

    policy: str
    kind: Literal["honest", "constant"]
    means: dict[str, float]
    ratios: dict[str, float]
    confidences: dict[str, float | None]


def _mean_of(
    grader: OversightGrader,
    tasks: Sequence[Task],
    policy: Callable[[Task], dict[str, Any] | None],
    runner: Any,
) -> float:
    subs = []
    for task in tasks:
        fields = policy(task)
        subs.append(VerdictSubmission(task, None if fields is None else _verdict(fields)))
    return sum(b.total for b in grade_verdicts(grader, subs, runner)) / len(tasks)


def audit_named(
    tasks: Sequence[Task],
    *,
    seed: int = 0,
    grader: OversightGrader | None = None,
    constants: dict[str, dict[str, Any] | None] | None = None,
    runner: Any = None,
) -> list[PolicyRow]:
    """Grade the honest policies and the named constants (default
    :func:`named_constants` of the tuning half) on both halves of ``tasks``."""
    grader = grader or OversightGrader()
    halves = split_halves(tasks, seed)
    if constants is None:
        constants = named_constants(halves["tuning"])
    rows: list[PolicyRow] = []
    oracle_means: dict[str, float] = {}
    for name, policy in honest_policies().items():
        means = {h: _mean_of(grader, mine, policy, runner) for h, mine in halves.items()}
        if name == "oracle":
            oracle_means = means
        rows.append(_row(name, "honest", means, oracle_means, dict.fromkeys(halves)))
    for name, fields in constants.items():
        means = {}
        chosen: dict[str, float | None] = {}
        for half, mine in halves.items():
            if fields is None:
                means[half], chosen[half] = _mean_of(grader, mine, lambda t: None, runner), None
            elif fields["confidence"] == "best":
                content = {k: v for k, v in fields.items() if k != "confidence"}
                chosen[half], means[half] = _best_confidence(grader, mine, content, runner)
            else:
                means[half] = mean_total(grader, mine, fields, runner)
                chosen[half] = fields["confidence"]
        rows.append(_row(name, "constant", means, oracle_means, chosen))
    return rows


def _row(
    name: str,
    kind: Literal["honest", "constant"],
    means: dict[str, float],
    oracle_means: dict[str, float],
    chosen: dict[str, float | None],
) -> PolicyRow:
    return PolicyRow(
        policy=name,
        kind=kind,
        means={h: round(m, 4) for h, m in means.items()},
        ratios={h: round(m / oracle_means[h], 4) for h, m in means.items()},
        confidences=chosen,
    )
