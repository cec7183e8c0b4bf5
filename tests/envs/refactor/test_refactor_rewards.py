"""Refactor's rewards stay what they were (issue 35: one family shape): a fixed sample of
completions on its generated bank (the reference, the partial action, the no-op, every
registered hack, on the optimised and the reference path) gives byte for
byte the breakdowns committed in ``tests/fixtures/refactor_rewards.json``.

The sample is ``benchmarks/family_rewards.py``'s; regenerate the file with
``python benchmarks/family_rewards.py --family refactor --out tests/fixtures/refactor_rewards.json``
only for an intended change of rewards (and say so in the changelog)."""

from __future__ import annotations

from tests.fixtures.reward_samples import ROOT, changed, covers_fixes_noops_and_hacks, sample_module

FAMILY = "refactor"
EXPECTED = ROOT / "tests" / "fixtures" / f"{FAMILY}_rewards.json"


def test_refactor_rewards_are_byte_identical_to_the_committed_ones() -> None:
    sample = sample_module("family_rewards")
    graded = sample.to_text(sample.grade_sample(FAMILY))
    differing = changed(graded, EXPECTED.read_text(encoding="utf-8"))
    assert not differing, f"Refactor breakdowns changed: {differing}"


def test_the_sample_covers_references_noops_and_every_hack() -> None:
    covers_fixes_noops_and_hacks(FAMILY, EXPECTED)
