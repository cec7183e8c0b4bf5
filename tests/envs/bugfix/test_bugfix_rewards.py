"""Bugfix's rewards stay what they were (issue 35: one grading path): a fixed sample of
completions on the generated bank (three tasks) and on the real bank built offline from
the vendored textkit project (three tasks, with and without behaviour checks) -- the
reference fix, the no-op and every registered hack, on the optimised and the reference
path, and one batch mixing both banks -- gives byte for byte the breakdowns committed in
``tests/fixtures/bugfix_rewards.json``.

The sample is ``benchmarks/bugfix_rewards.py``'s; regenerate the file with
``python benchmarks/bugfix_rewards.py --out tests/fixtures/bugfix_rewards.json`` only
for an intended change of rewards (and say so in the changelog)."""

from __future__ import annotations

import json

from tests.fixtures.reward_samples import ROOT, changed, sample_module

EXPECTED = ROOT / "tests" / "fixtures" / "bugfix_rewards.json"


def test_bugfix_rewards_are_byte_identical_to_the_committed_ones() -> None:
    sample = sample_module("bugfix_rewards")
    graded = sample.to_text(sample.grade_sample())
    differing = changed(graded, EXPECTED.read_text(encoding="utf-8"))
    assert not differing, f"Bugfix breakdowns changed: {differing}"


def test_the_sample_covers_both_banks_both_paths_fixes_noops_and_hacks() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert set(expected) == {"bank", "real", "real_tests_only", "mixed"}
    for name in ("bank", "real", "real_tests_only"):
        assert len(expected[name]) == 3, name
        for task, paths in expected[name].items():
            assert paths["optimised"] == paths["reference"], task
            graded = paths["optimised"]
            reference = graded["reference"]["reward"]
            assert reference > 0.9, task
            assert {"noop", "delete_tests"} <= set(graded), task
            assert all(g["reward"] < reference for c, g in graded.items() if c != "reference")
    # the behaviour term: graded on the real bank, not applicable (weight 0) without checks
    for name, weighted in (("real", True), ("real_tests_only", False)):
        for paths in expected[name].values():
            term = paths["optimised"]["reference"]["breakdown"]["terms"]["behaviour"]
            assert (term["weight"] > 0) is weighted, name
    assert len(expected["mixed"]) == 4
