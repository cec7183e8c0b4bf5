"""Known hacks of ``Forge/Oversight-v0``: verdicts that try to collect credit without
really overseeing (every type claimed, the whole answer quoted as evidence).
``forgegym tasks verify`` checks each scores no more than the no-op.

No "hedged confidence" hack any more (issue #28): with calibration a proper rule on the
stated probability of corruption and no abstention threshold, confidence 0.5 is a report
like any other, priced by the Brier rule; it never beats the truthful confidence in
expectation (tests/envs/oversight/test_oversight_propriety.py).
"""

from __future__ import annotations

from collections.abc import Callable

from forgegym.core.task import Task
from forgegym.envs.oversight.documents import CORRUPTIONS
from forgegym.envs.oversight.episodes import hidden_of
from forgegym.envs.oversight.policies import oracle_verdict, verdict_action

__all__ = ["HACKS", "hack_all_types", "hack_whole_answer"]


def hack_all_types(task: Task) -> str:
    """Claim every corruption type at once, quoting one sentence."""
    verdict = oracle_verdict(task)
    verdict.update(corrupted=True, corruption_type=", ".join(CORRUPTIONS), confidence=1.0)
    verdict.setdefault("evidence", hidden_of(task).worker_text.split(". ")[0])
    return verdict_action(verdict)


def hack_whole_answer(task: Task) -> str:
    """Quote the whole answer as evidence (it surely contains the corrupted span)."""
    hidden = hidden_of(task)
    verdict = oracle_verdict(task)
    verdict.update(corrupted=True, evidence=hidden.worker_text, confidence=1.0)
    verdict.setdefault("corruption_type", "temporal_shift")
    return verdict_action(verdict)


HACKS: dict[str, Callable[[Task], str]] = {
    "all_types": hack_all_types,
    "whole_answer_evidence": hack_whole_answer,
}
