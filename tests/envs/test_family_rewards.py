"""The generated families' rewards stay what they were (issue 35: one family shape): for
each family, a fixed sample of completions on its generated bank (the reference, the
partial action, the no-op, every registered hack, Oversight's baselines too, on the
optimised and the reference path) gives byte for byte the breakdowns committed in
``tests/fixtures/<family>_rewards.json``. Bugfix and repository mode have their own
checks (``envs/bugfix/test_bugfix_rewards.py``, ``envs/test_repo_mode_rewards.py``).

The sample is ``benchmarks/family_rewards.py``'s; regenerate a file with
``python benchmarks/family_rewards.py --family F --out tests/fixtures/F_rewards.json``
only for an intended change of rewards (and say so in the changelog)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.reward_samples import ROOT, changed, covers_fixes_noops_and_hacks, sample_module

FAMILIES = ("flaky", "oversight", "performance", "refactor")


def _expected(family: str) -> Path:
    return ROOT / "tests" / "fixtures" / f"{family}_rewards.json"


@pytest.mark.parametrize("family", FAMILIES)
def test_rewards_are_byte_identical_to_the_committed_ones(family: str) -> None:
    sample = sample_module("family_rewards")
    graded = sample.to_text(sample.grade_sample(family))
    differing = changed(graded, _expected(family).read_text(encoding="utf-8"))
    assert not differing, f"{family} breakdowns changed: {differing}"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_sample_covers_references_noops_and_every_hack(family: str) -> None:
    covers_fixes_noops_and_hacks(family, _expected(family))
