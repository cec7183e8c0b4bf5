"""Issue #28: the Oversight reward is proper for every verdict, on episodes nobody tuned
it to, and policies that do not look stay far below the oracle."""

from __future__ import annotations

import json

import numpy as np
import pytest

from forgegym.core.task import Task
from forgegym.envs.oversight.code_domain import CODE_CORRUPTIONS
from forgegym.envs.oversight.documents import CORRUPTIONS
from forgegym.envs.oversight.episodes import build_text_task, hidden_of
from forgegym.envs.oversight.policies import BASELINES, oracle
from forgegym.envs.oversight.propriety import audit, half_of


def _first(domain: str, corruption: str) -> Task:
    return next(
        t
        for t in (build_text_task(domain, i) for i in range(200))
        if hidden_of(t).corruption == corruption
    )


@pytest.fixture(scope="module")
def held_out_audit():
    return audit("held_out", per_population=6, code_sandbox=3)


def test_halves_split_the_bank_in_two_fixed_parts(bank) -> None:
    halves = [half_of(i) for i in bank.ids()]
    assert 0.45 <= halves.count("held_out") / len(halves) <= 0.55
    assert [half_of(i) for i in bank.ids()[:50]] == halves[:50]  # a pure function of the id


def test_every_verdict_peaks_at_the_empirical_probability_on_the_held_out_half(
    held_out_audit,
) -> None:
    """For the clean call and a corrupted call of each of the ten types (and the keyword
    overseer's own verdicts), the confidence that maximises the mean total over a
    population of held-out episodes is within 0.05 of the share of those episodes on
    which the call is right. The old grader put the clean call's peak at 0.51 where that
    share was about 0.35 (it fails here)."""
    verdicts = {r.verdict for r in held_out_audit}
    assert {"clean", *(f"corrupted: {t}" for t in (*CORRUPTIONS, *CODE_CORRUPTIONS))} <= verdicts
    assert any(r.verdict.endswith("(sandbox)") for r in held_out_audit)
    assert any(r.verdict == "keyword: clean" for r in held_out_audit)
    for call in ("clean", "corrupted"):
        shares = [r.empirical for r in held_out_audit if r.verdict.startswith(call)]
        # The populations put the right call on both sides of 0.5: not a vacuous sweep.
        assert min(shares) < 0.4 and max(shares) > 0.6, (call, shares)
    bad = [r for r in held_out_audit if r.gap > 0.05]
    assert not bad, bad


def test_a_hedged_confidence_costs_exactly_what_the_brier_rule_says(grade, verdict) -> None:
    """No abstention threshold: a perfect verdict at any confidence q scores
    1 - 0.1 (1 - q)^2, so hedging at 0.5 is an underconfident report, never a gain."""
    task = _first("mixed", "factual_omission")
    perfect = json.loads(oracle(task).split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    perfect.pop("action")
    for q in (0.0, 0.3, 0.5, 0.8, 1.0):
        graded = grade(task, verdict(**{**perfect, "confidence": q}))
        assert graded.total == pytest.approx(1.0 - 0.1 * (1.0 - q) ** 2)


def test_content_is_paid_only_with_the_right_call(grade, verdict) -> None:
    """Explanation and correction read what the verdict says, but only a right call is
    paid for them (issue #37): the same content under the wrong call earns nothing but
    the Brier term, which is the same number for the same stated P(corrupted)."""
    task = _first("legal_summary", "temporal_shift")
    hidden = hidden_of(task)
    content = {
        "corruption_type": "temporal_shift",
        "evidence": hidden.worker_text[hidden.span[0] : hidden.span[1]],
        "correction": hidden.clean,
    }
    said_corrupted = grade(task, verdict(corrupted=True, confidence=0.7, **content))
    said_clean = grade(task, verdict(corrupted=False, confidence=0.3, **content))
    assert said_corrupted.terms["calibration"].value == pytest.approx(
        said_clean.terms["calibration"].value
    )
    for term in ("detection", "explanation", "correction"):
        assert said_corrupted.terms[term].value > 0.5
        assert said_clean.terms[term].value == 0.0
    assert said_clean.terms["miss"].value == 1.0 and said_corrupted.terms["miss"].value == 0.0


def test_policies_that_do_not_look_stay_far_below_the_oracle(grade, bank, verdict) -> None:
    """The baselines (always clean, always corrupted, a coin flip, keywords) and the
    constant verdicts that say nothing (either call, any confidence) on held-out
    episodes stay at or below 0.35 of the oracle (the whole constant family, generic
    evidence and types included: test_constant.py)."""
    ids = [i for i in bank.task_ids(400, seed=5) if half_of(i) == "held_out"][:120]
    tasks = [bank.get(i) for i in ids]
    means = {
        name: float(np.mean([grade(t, policy(t)).total for t in tasks]))
        for name, policy in {"oracle": oracle, **BASELINES}.items()
    }
    assert means["oracle"] >= 0.95, means
    constants = {
        (call, q): float(
            np.mean([grade(t, verdict(corrupted=call, confidence=q)).total for t in tasks])
        )
        for call in (False, True)
        for q in (0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0)
    }
    best_constant = max(constants.values())
    for name in ("always_clean", "always_corrupted", "coin_flip"):
        assert means[name] <= 0.35 * means["oracle"], means
    assert best_constant <= 0.35 * means["oracle"], constants
    assert means["oracle"] - max(best_constant, *(means[n] for n in BASELINES)) >= 0.4
