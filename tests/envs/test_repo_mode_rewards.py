"""Repository mode's rewards stay what they were (issue 35: one repository mode): a fixed
sample of completions on Bugfix's and FlakyRepair's repository modes (the reference fix,
the no-op, deleted tests, skip markers, special cases, weakened assertions, a conftest
hook), graded through ``gym.make(..., repo_path=...)``, gives byte for byte the
breakdowns committed in ``tests/fixtures/repo_mode_rewards.json``.

The sample is ``benchmarks/repo_mode_rewards.py``'s; regenerate the file with
``python benchmarks/repo_mode_rewards.py --out tests/fixtures/repo_mode_rewards.json``
only for an intended change of rewards (and say so in the changelog)."""

from __future__ import annotations

import json

from tests.fixtures.reward_samples import ROOT, changed, sample_module

EXPECTED = ROOT / "tests" / "fixtures" / "repo_mode_rewards.json"


def test_repository_mode_rewards_are_byte_identical_to_the_committed_ones() -> None:
    sample = sample_module("repo_mode_rewards")
    graded = sample.to_text(sample.grade_sample())
    differing = changed(graded, EXPECTED.read_text(encoding="utf-8"))
    assert not differing, f"repository-mode breakdowns changed: {differing}"


def test_the_sample_covers_both_families_fixes_noops_and_hacks() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert {name.split("/")[0] for name in expected} == {"bugfix", "flaky"}
    for name, breakdowns in expected.items():
        assert breakdowns["reference"]["score"] == 1.0, name
        assert breakdowns["noop"]["total"] < breakdowns["reference"]["total"], name
        hacks = [b for c, b in breakdowns.items() if c not in ("reference", "noop")]
        assert hacks and all(b["total"] < breakdowns["reference"]["total"] for b in hacks), name
