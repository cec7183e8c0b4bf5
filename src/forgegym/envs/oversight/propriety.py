"""Propriety audit of the Oversight reward: is truthful confidence optimal for every verdict?

For one kind of verdict (its call, its corruption type and how it fills its content) over
a population of episodes, the *empirical probability* is the share of the population on
which the verdict's call is right. The audit grades the verdict at every stated
confidence on a grid over [0, 1] (the same content each time), averages the totals over
the population (the expected reward of stating that confidence there), and reports where
the maximum lies. A proper reward puts it at the empirical probability; issue #28 asks
for every verdict to land within 0.05 of it on a held-out half of the bank.

Verdict kinds (:func:`verdict_kinds`): a clean call (empty content, as an overseer that
saw nothing writes it) and a corrupted call of each of the ten corruption types, whose
content is informed the way a real overseer's is: where the episode carries that
corruption, the type, the corrupted span, the mechanism and the correction (in the code
domain also the trigger, run in the sandbox) are right; elsewhere the type is named with
a plausible wrong quote. Populations mix the episodes so that the empirical probability
falls on both sides of 0.5: the clean episodes with those of one corruption type (mostly
clean), and every episode of the domain kind (mostly corrupted). The keyword overseer's
own verdicts, grouped by its call and type, are audited too (the case the issue measured:
its clean calls are right about 35-40% of the time).

The bank splits into halves by a hash of the task id (:func:`half_of`): the grader's rule
was designed on the ``tuning`` half; the test runs the ``held_out`` half.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from forgegym.core.task import Task
from forgegym.envs.oversight.actions import ACTIONS, VerdictAction
from forgegym.envs.oversight.bank import OversightTaskBank
from forgegym.envs.oversight.code_domain import CODE_CORRUPTIONS
from forgegym.envs.oversight.documents import CORRUPTIONS
from forgegym.envs.oversight.episodes import CODE_DOMAIN, hidden_of
from forgegym.envs.oversight.grader import OversightGrader, VerdictSubmission
from forgegym.envs.oversight.policies import keyword_overseer

__all__ = [
    "Half",
    "SweepResult",
    "VerdictKind",
    "audit",
    "half_of",
    "sweep",
    "verdict_kinds",
]

Half = Literal["tuning", "held_out"]
#: Coarse grid, then every 0.01 within 0.1 of its best point (both neighbouring coarse
#: intervals): the maximum to 0.01.
COARSE = tuple(i / 10 for i in range(11))
FINE_RADIUS = 0.10


def half_of(task_id: str) -> Half:
    """The half of the bank ``task_id`` belongs to (a fixed hash: no tuning can move it)."""
    digest = hashlib.sha256(f"oversight-propriety:{task_id}".encode()).digest()
    return "tuning" if digest[0] % 2 == 0 else "held_out"


class SweepResult(BaseModel):
    """One verdict kind on one population: the empirical probability that its call is
    right, the confidence that maximises the mean total, and the gap between them."""

    verdict: str
    population: str
    episodes: int
    empirical: float
    argmax: float
    gap: float
    best_mean: float
    mean_at_empirical: float


@dataclass(frozen=True)
class VerdictKind:
    """A verdict (``make(task, confidence)``) and the population it is audited on."""

    verdict: str
    population: str
    tasks: tuple[Task, ...]
    make: Callable[[Task, float], VerdictAction]


def _verdict(fields: dict[str, Any]) -> VerdictAction:
    parsed = ACTIONS.parse(json.dumps({"action": "verdict", **fields}))
    action = parsed.actions[0] if parsed.ok and parsed.actions else None
    if not isinstance(action, VerdictAction):
        raise ValueError(f"not a verdict: {fields!r} ({parsed.error})")
    return action


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in text.replace("\n", ". ").split(". ") if len(s.strip()) > 12]


def _informed_content(task: Task, claimed: str, *, run_code: bool) -> dict[str, Any]:
    """What an overseer claiming ``claimed`` writes: right where the episode has that
    corruption, a plausible wrong quote elsewhere."""
    hidden = hidden_of(task)
    content: dict[str, Any] = {"corruption_type": claimed}
    if hidden.corruption == claimed and hidden.span is not None:
        content["evidence"] = hidden.worker_text[hidden.span[0] : hidden.span[1]].strip()
        if hidden.domain == CODE_DOMAIN:
            if run_code and hidden.counterexample is not None:
                ce = hidden.counterexample
                content["trigger"] = {"function": ce["function"], "args": ce["args"]}
                content["correction"] = hidden.clean
        else:
            content["explanation"] = f"It should say: {hidden.mechanism[0]}."
            content["correction"] = hidden.clean
        return content
    sentences = _sentences(hidden.worker_text)
    if sentences:
        content["evidence"] = sentences[len(sentences) // 2]
    if hidden.domain == CODE_DOMAIN and run_code and hidden.functions:
        content["trigger"] = {"function": hidden.functions[0], "args": [0]}
    return content


def verdict_kinds(
    tasks: Sequence[Task], per_population: int, *, code_sandbox: int = 0, keyword: bool = True
) -> list[VerdictKind]:
    """The audited verdict kinds (see the module docstring) over ``tasks`` (in order).

    For each domain kind (text, code): the clean call on every episode, and on the clean
    episodes with half as many of one corruption type; each corrupted call on every
    episode and on those clean-plus-one-type populations (so the empirical probability
    sits well below 0.5 for some and above it for others). ``per_population`` bounds the
    clean episodes of a population. ``code_sandbox`` > 0 adds the backdoor verdict with
    trigger and corrected module (sandbox jobs) on that many code episodes; ``keyword``
    adds the keyword overseer's own verdicts grouped by call and type."""
    kinds: list[VerdictKind] = []

    def clean_call(task: Task, q: float) -> VerdictAction:
        return _verdict({"corrupted": False, "confidence": q})

    def mixture(pool: Sequence[Task], claimed: str, limit: int) -> tuple[Task, ...]:
        clean = [t for t in pool if hidden_of(t).corruption is None][:limit]
        dirty = [t for t in pool if hidden_of(t).corruption == claimed][: max(1, limit // 2)]
        return (*clean, *dirty)

    text = [t for t in tasks if hidden_of(t).domain != CODE_DOMAIN]
    code = [t for t in tasks if hidden_of(t).domain == CODE_DOMAIN]
    for label, pool, types in (("text", text, CORRUPTIONS), ("code", code, CODE_CORRUPTIONS)):
        every = tuple(pool[: 3 * per_population])
        kinds.append(VerdictKind("clean", f"every {label} episode", every, clean_call))
        kinds.append(
            VerdictKind(
                "clean",
                f"clean and {types[0]} {label} episodes",
                mixture(pool, types[0], per_population),
                clean_call,
            )
        )
        for claimed in types:

            def corrupted_call(task: Task, q: float, claimed: str = claimed) -> VerdictAction:
                content = _informed_content(task, claimed, run_code=False)
                return _verdict({"corrupted": True, "confidence": q, **content})

            kinds.append(
                VerdictKind(
                    f"corrupted: {claimed}",
                    f"clean and {claimed} {label} episodes",
                    mixture(pool, claimed, per_population),
                    corrupted_call,
                )
            )
            kinds.append(
                VerdictKind(
                    f"corrupted: {claimed}", f"every {label} episode", every, corrupted_call
                )
            )
    if code_sandbox > 0:

        def backdoor_call(task: Task, q: float) -> VerdictAction:
            content = _informed_content(task, "backdoor", run_code=True)
            return _verdict({"corrupted": True, "confidence": q, **content})

        kinds.append(
            VerdictKind(
                "corrupted: backdoor, trigger and corrected module (sandbox)",
                "clean and backdoor code episodes",
                mixture(code, "backdoor", code_sandbox),
                backdoor_call,
            )
        )
    if keyword:
        kinds.extend(_keyword_kinds(tasks, per_population))
    return kinds


def _keyword_kinds(tasks: Sequence[Task], per_population: int) -> list[VerdictKind]:
    """The keyword overseer's own verdicts, grouped by call and claimed type."""
    groups: dict[str, list[tuple[Task, dict[str, Any]]]] = {}
    for task in tasks:
        text = keyword_overseer(task)
        fields = json.loads(text.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
        fields.pop("action")
        name = (
            f"keyword: corrupted: {fields.get('corruption_type')}"
            if fields["corrupted"]
            else "keyword: clean"
        )
        groups.setdefault(name, []).append((task, fields))
    kinds: list[VerdictKind] = []
    for name, members in sorted(groups.items()):
        chosen = members[: 2 * per_population]
        table = {t.task_id: f for t, f in chosen}

        def keyword_call(
            task: Task, q: float, table: dict[str, dict[str, Any]] = table
        ) -> VerdictAction:
            return _verdict({**table[task.task_id], "confidence": q})

        population = "where the keyword overseer says so"
        kinds.append(VerdictKind(name, population, tuple(t for t, _ in chosen), keyword_call))
    return kinds


def _job_signature(jobs: Sequence[Any]) -> list[Any]:
    """What a job runs (its calls), without the scratch directory's name."""
    return [[(c.target, json.dumps(c.args, sort_keys=True)) for c in job.calls] for job in jobs]


def sweep(grader: OversightGrader, kind: VerdictKind, runner: Any = None) -> SweepResult:
    """The mean total of ``kind``'s verdict at each stated confidence (see the module
    docstring) and where it peaks. Sandbox jobs run once per episode: they must not
    depend on the confidence (checked: the jobs at confidence 0 and 1 must match)."""
    if not kind.tasks:
        raise ValueError(f"{kind.verdict} on {kind.population}: empty population")
    results: list[tuple[VerdictSubmission, list[Any]]] = []
    pending: list[tuple[VerdictSubmission, int, int]] = []
    all_jobs: list[Any] = []
    right = 0
    for task in kind.tasks:
        low = VerdictSubmission(task, kind.make(task, 0.0))
        high = VerdictSubmission(task, kind.make(task, 1.0))
        try:
            jobs = grader.jobs(high)
            if _job_signature(grader.jobs(low)) != _job_signature(jobs):
                raise AssertionError(
                    f"{task.task_id}: the grader's sandbox jobs depend on the confidence"
                )
        finally:
            low.cleanup()
        pending.append((high, len(all_jobs), len(all_jobs) + len(jobs)))
        all_jobs.extend(jobs)
        verdict = high.verdict
        assert verdict is not None
        right += verdict.corrupted == (hidden_of(task).corruption is not None)
    try:
        outputs: list[Any] = []
        if all_jobs:
            if runner is None:
                from forgegym.sandbox.runners import get_default_runner

                runner = get_default_runner()
            outputs = runner.run_many(all_jobs)
        results = [(sub, outputs[a:b]) for sub, a, b in pending]
    finally:
        for sub, _, _ in pending:
            sub.cleanup()

    cache: dict[float, float] = {}

    def mean_total(q: float) -> float:
        q = round(q, 2)
        if q not in cache:
            totals = []
            for sub, outs in results:
                assert sub.verdict is not None
                # The same verdict with only the confidence changed (validated: q in [0, 1]).
                verdict = sub.verdict.model_copy(update={"confidence": q})
                graded = VerdictSubmission(sub.task, verdict, state=sub.state)
                totals.append(grader.score(graded, outs).total)
            cache[q] = sum(totals) / len(totals)
        return cache[q]

    coarse = max(COARSE, key=mean_total)
    fine = [
        round(coarse + d / 100, 2)
        for d in range(-round(100 * FINE_RADIUS), round(100 * FINE_RADIUS) + 1)
        if 0.0 <= coarse + d / 100 <= 1.0
    ]
    best = max(fine, key=mean_total)
    empirical = right / len(kind.tasks)
    return SweepResult(
        verdict=kind.verdict,
        population=kind.population,
        episodes=len(kind.tasks),
        empirical=round(empirical, 4),
        argmax=best,
        gap=round(abs(best - empirical), 4),
        best_mean=round(mean_total(best), 4),
        mean_at_empirical=round(mean_total(empirical), 4),
    )


def audit(
    half: Half,
    per_population: int = 40,
    *,
    code_sandbox: int = 0,
    keyword: bool = True,
    grader: OversightGrader | None = None,
    bank: OversightTaskBank | None = None,
    runner: Any = None,
) -> list[SweepResult]:
    """:func:`sweep` every :func:`verdict_kinds` on one half of the bank: episodes of that
    half in a fixed shuffled order, at most ``3 * per_population`` of each (domain kind,
    corruption) class (built from the id and the bank's ground truth: only the episodes
    used are built)."""
    bank = bank or OversightTaskBank()
    grader = grader or OversightGrader()
    taken: dict[tuple[bool, str | None], int] = {}
    chosen: list[str] = []
    for task_id in bank.task_ids(len(bank), seed=28):
        if half_of(task_id) != half:
            continue
        key = (task_id.split("/")[1] == CODE_DOMAIN, bank.corruption_of(task_id))
        if taken.get(key, 0) < 3 * per_population:
            taken[key] = taken.get(key, 0) + 1
            chosen.append(task_id)
    tasks = [bank.get(i) for i in chosen]
    kinds = verdict_kinds(tasks, per_population, code_sandbox=code_sandbox, keyword=keyword)
    return [sweep(grader, kind, runner) for kind in kinds]
