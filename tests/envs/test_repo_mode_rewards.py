"""Repository mode's rewards stay what they were (issue 35: one repository mode): a fixed
sample of completions on Bugfix's and FlakyRepair's repository modes (the reference fix,
the no-op, deleted tests, skip markers, special cases, weakened assertions, a conftest
hook), graded through ``gym.make(..., repo_path=...)``, gives byte for byte the
breakdowns committed in ``tests/fixtures/repo_mode_rewards.json``.

The sample is ``benchmarks/repo_mode_rewards.py``'s; regenerate the file with
``python benchmarks/repo_mode_rewards.py --out tests/fixtures/repo_mode_rewards.json``
only for an intended change of rewards (and say so in the changelog)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = ROOT / "tests" / "fixtures" / "repo_mode_rewards.json"


def _sample_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "repo_mode_rewards", ROOT / "benchmarks" / "repo_mode_rewards.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_repository_mode_rewards_are_byte_identical_to_the_committed_ones() -> None:
    sample = _sample_module()
    graded = sample.to_text(sample.grade_sample())
    expected = EXPECTED.read_text(encoding="utf-8")
    if graded != expected:
        got, want = json.loads(graded), json.loads(expected)
        differing = [
            f"{name}/{completion}"
            for name in sorted(set(got) | set(want))
            for completion in sorted(set(got.get(name, {})) | set(want.get(name, {})))
            if got.get(name, {}).get(completion) != want.get(name, {}).get(completion)
        ]
        raise AssertionError(f"repository-mode breakdowns changed: {differing}")


def test_the_sample_covers_both_families_fixes_noops_and_hacks() -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert {name.split("/")[0] for name in expected} == {"bugfix", "flaky"}
    for name, breakdowns in expected.items():
        assert breakdowns["reference"]["score"] == 1.0, name
        assert breakdowns["noop"]["total"] < breakdowns["reference"]["total"], name
        hacks = [b for c, b in breakdowns.items() if c not in ("reference", "noop")]
        assert hacks and all(b["total"] < breakdowns["reference"]["total"] for b in hacks), name
