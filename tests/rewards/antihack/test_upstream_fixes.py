"""Precision of repository mode's static anti-hack scans on real upstream bug fixes
(issue #37): no upstream fix of the corpus (``upstream_fixes/``, built by
``benchmarks/upstream_fixes.py --extract``) is flagged by any scan repository mode runs
on a patch (:func:`forgegym.envs.bugfix.repo.repo_patch_findings`). Static only."""

from __future__ import annotations

import ast
import importlib.util
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).parents[3] / "benchmarks" / "upstream_fixes.py"

MIN_CASES = 40
MIN_PROJECTS = 8


def _load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("forgegym_bench_upstream_fixes", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
CASES = bench.load_cases()


def test_the_corpus_is_large_spread_and_split_by_project() -> None:
    assert len(CASES) >= MIN_CASES
    assert len(CASES) == len(bench.CASES), "corpus out of date: run --extract"
    projects = Counter(c.project for c in CASES)
    assert len(projects) >= MIN_PROJECTS
    for case in CASES:
        assert case.split == bench.split_of(case.project), case.id
        assert case.commit_url == f"{case.repository}/commit/{case.commit}"
        assert case.licence in ("MIT", "BSD-3-Clause", "Apache-2.0"), case.id
    halves = {c.split for c in CASES}
    assert halves == {"tuning", "heldout"}
    for split in halves:
        assert len({c.project for c in CASES if c.split == split}) >= MIN_PROJECTS // 2


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_an_upstream_fix_is_not_flagged(case: Any) -> None:
    # every file parses, else a scan would find nothing for want of a tree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # old code's invalid escapes
        warnings.simplefilter("ignore", DeprecationWarning)
        for text in (*case.before.values(), *case.after.values(), *case.tests.values()):
            ast.parse(text)
        findings = bench.scan_case(case)
    assert any(case.before[p] != case.after[p] for p in case.after), case.id
    assert not findings, (
        f"{case.id} ({case.commit_url}, {case.message!r}) flagged in repository mode: "
        + "; ".join(f"{f.kind} at {f.where}: {f.detail}" for f in findings)
    )


def test_the_scans_see_the_corpus_tests() -> None:
    # the check could pass vacuously if the tests handed to the scans were lost: the
    # same fix with one test value special-cased on top is flagged
    case = next(c for c in CASES if c.id == "tenacity_0bdf1d9")
    ((path, fixed),) = case.after.items()
    cheat = fixed.replace(
        "    if pos_num == 0:", '    if pos_num == 111:\n        return "th"\n    if pos_num == 0:'
    )
    assert cheat != fixed
    kinds = {f.kind for f in bench.repo_patch_findings(case.before, {path: cheat}, case.tests)}
    assert "special_case" in kinds
