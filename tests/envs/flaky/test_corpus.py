"""FlakyRepair repo mode on the real-world corpus (issue #14, Must show 1).

The corpus (``corpus/<case>/``: ``repo/``, ``fix/``, ``case.json``) holds flaky tests
from public Python projects with their upstream fixes; ``benchmarks/flaky_corpus.py``
loads and runs it (the full table: ``python benchmarks/flaky_corpus.py``).

Within the CI budget every case's detection, skip-marker hack, weakened assertion and
repository-mode attacks (``repo_attacks.json``; all but one gated statically) are checked
through the env, and its upstream fix is checked to pass the static
anti-hack rules; the upstream fix's success and the no-op on one case per category
(the first by id). One test per case: one env, one detection run (the preflight,
shared by every submission of the case), hacks gated statically without a rerun. ``ENGINE_GAPS`` lists what the engine still gets wrong, each with the
reason (reported in the team's notes for the FlakyRepair owner); those checks are
strict xfails, so a fixed gap fails here until its entry is removed.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).parents[3] / "benchmarks" / "flaky_corpus.py"

MIN_CASES = 65
MIN_CATEGORIES = 10
MIN_ATTACKS = 25


def _load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("forgegym_bench_flaky_corpus", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
CASES = bench.load_cases()
IDS = [c.id for c in CASES]


def _graded_subset() -> list[str]:
    """One case per category (the first by id): the upstream fix and the no-op."""
    first: dict[str, str] = {}
    for case in CASES:
        first.setdefault(case.category, case.id)
    return sorted(first.values())


GRADED = _graded_subset()

#: (case id, check) -> why the engine still fails it. check: "detect", "fix", "weaken",
#: "fix_flagged".
#: Measured on main at 7aeff6b (FlakyRepair repo mode with class ids,
#: hash-seed chaos, mutant power and the anti-hack precision work).
ENGINE_GAPS: dict[tuple[str, str], str] = {}


def _judge(case_id: str, checks: dict[str, tuple[bool, str]]) -> None:
    """Fail on any check that fails outside ``ENGINE_GAPS`` or a gap that now passes;
    xfail when only known gaps fail."""
    failed, fixed_gaps, gaps = [], [], []
    for check, (ok, detail) in checks.items():
        gap = ENGINE_GAPS.get((case_id, check))
        if gap is None and not ok:
            failed.append(f"{check}: {detail}")
        elif gap is not None and ok:
            fixed_gaps.append(f"{check} now passes: remove its ENGINE_GAPS entry ({gap})")
        elif gap is not None:
            gaps.append(f"{check}: {gap}")
    assert not failed and not fixed_gaps, f"{case_id}: " + "; ".join(failed + fixed_gaps)
    if gaps:
        pytest.xfail(f"{case_id}: known engine gap(s): " + "; ".join(gaps))


# ------------------------------------------------------------------ manifest
def test_manifest_is_consistent() -> None:
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} cases"
    categories = Counter(c.category for c in CASES)
    assert len(categories) >= MIN_CATEGORIES, categories
    assert set(categories) <= set(bench.CATEGORIES), set(categories) - set(bench.CATEGORIES)
    assert set(bench.ENV_CATEGORY) == set(bench.CATEGORIES)
    urls = [c.meta["url"] for c in CASES]
    assert len(set(urls)) == len(urls), "two cases cite the same upstream thread"
    for case in CASES:
        missing = [k for k in bench.REQUIRED if not case.meta.get(k)]
        assert not missing, f"{case.id}: missing {missing}"
        assert case.meta["url"].startswith("https://github.com/"), case.id
        files = case.files()
        assert case.test_path in files, f"{case.id}: {case.test_path} is not in repo/"
        node = bench.find_test_node(files[case.test_path], case.test_id)
        assert node is not None, f"{case.id}: {case.test_id} names no test function"
        for path, text in files.items():
            if path.endswith(".py"):
                ast.parse(text, filename=f"{case.id}/{path}")
        fixed = case.fix_files()
        assert fixed, f"{case.id}: empty fix/"
        for path, text in fixed.items():
            assert path in files, f"{case.id}: fix/{path} is not a file of repo/"
            assert text != files[path], f"{case.id}: fix/{path} changes nothing"
            ast.parse(text, filename=f"{case.id}/fix/{path}")
        weaken = case.meta["weaken"]
        assert files[weaken["path"]].count(weaken["search"]) == 1, f"{case.id}: weaken search"
        assert weaken["replace"] != weaken["search"]


def test_split_and_attacks_are_recorded_and_apply() -> None:
    """Both halves are recorded as the salted hash says, hold cases of most categories,
    and every attack applies to its case (each search matches once, in order)."""
    halves = Counter(c.split for c in CASES)
    for case in CASES:
        assert case.split == bench.split_of(case.id), case.id
    assert set(halves) == set(bench.SPLITS) and min(halves.values()) >= len(CASES) // 3
    attacks = bench.load_attacks()
    assert len(attacks) >= MIN_ATTACKS and len({a.id for a in attacks}) == len(attacks)
    assert set(Counter(a.split for a in attacks)) == set(bench.SPLITS)
    by_id = {c.id: c for c in CASES}
    for attack in attacks:
        assert attack.split == bench.split_of(attack.id), attack.id
        assert attack.case in by_id and attack.kind and attack.description, attack.id
        files = by_id[attack.case].files()
        for edit in attack.edits:
            text = files[edit["path"]]
            assert text.count(edit["search"]) == 1, (attack.id, edit["search"][:40])
            files[edit["path"]] = text.replace(edit["search"], edit["replace"])
        assert bench.submission_edits(by_id[attack.case], f"attack:{attack.id}")
    with pytest.raises(ValueError, match="no attack"):
        bench.submission_edits(CASES[0], "attack:no-such-attack")


def test_submissions_are_well_formed() -> None:
    case = CASES[0]
    (skip,) = bench.skip_edits(case)
    tree = ast.parse(skip["content"])
    assert "pytest.mark.skip" in skip["content"] and tree.body
    node = bench.find_test_node(skip["content"], case.test_id)
    assert node is not None and any("skip" in ast.unparse(d) for d in node.decorator_list)
    assert bench.submission_edits(case, "noop") == []
    with pytest.raises(ValueError, match="kind"):
        bench.submission_edits(case, "bogus")
    with pytest.raises(ValueError, match="unknown case"):
        bench.load_cases(ids=["no-such-case"])


def test_find_test_node_handles_classes_and_parameters() -> None:
    source = "class TestA:\n    def test_x(self):\n        pass\n\n\ndef test_y(n):\n    pass\n"
    assert bench.find_test_node(source, "t.py::TestA::test_x").name == "test_x"
    assert bench.find_test_node(source, "t.py::test_y[3]").name == "test_y"
    assert bench.find_test_node(source, "t.py::test_x") is None
    assert bench.find_test_node(source, "t.py::TestA") is None


# ------------------------------------------------------------ through the env
#: Each case's result, filled by its own test (one env and one detection run per case,
#: each test within pytest's per-test timeout), read by the rates test that runs last.
RESULTS: dict[str, Any] = {}


def _submissions(case_id: str) -> tuple[str, ...]:
    """The skip marker, the weakened assertion and the case's attacks on every case
    (gated statically, without a rerun, but for one judged by power), the upstream fix
    and the no-op on the graded subset."""
    attacks = tuple(f"attack:{a.id}" for a in bench.load_attacks(case=case_id))
    base = ("skip", "weaken", "fix", "noop") if case_id in GRADED else ("skip", "weaken")
    return base + attacks


@pytest.mark.slow
@pytest.mark.parametrize("case_id", IDS)
def test_case_through_the_env(case_id: str) -> None:
    """Detected flaky; the skip marker and the weakened assertion never succeed; the
    upstream fix is never flagged by a static rule; on the graded subset the upstream
    fix succeeds and the no-op does not."""
    (case,) = bench.load_cases(ids=[case_id])
    r = bench.run_case(case, submissions=_submissions(case_id), order_analysis=False)
    RESULTS[case_id] = r
    skip, weaken, noop, fix = (r.outcomes.get(k) for k in ("skip", "weaken", "noop", "fix"))
    assert skip is not None and not skip.success, f"the skip marker succeeded: {skip}"
    assert noop is None or not noop.success, f"the no-op succeeded: {noop}"
    won = {k: o for k, o in r.outcomes.items() if k.startswith("attack:") and o.success}
    assert not won, f"attacks reached success: {won}"
    checks = {
        "detect": (r.flaky, f"p0={r.baseline} {r.error or r.label}"),
        "weaken": (weaken is not None and not weaken.success, f"weakened: {weaken}"),
        "fix_flagged": (not r.fix_findings, f"upstream fix flagged: {r.fix_findings}"),
    }
    if case_id in GRADED:
        checks["fix"] = (fix is not None and fix.success, f"upstream fix: {fix or r.error}")
    _judge(case_id, checks)


@pytest.mark.slow
def test_rates_meet_issue_14() -> None:
    """Must show 1 over the cases the engine handles: all flaky, fix >= 95%, hacks 0."""
    if set(RESULTS) != set(IDS):
        pytest.skip("needs every case's test_case_through_the_env in this session")
    clean = [r for cid, r in RESULTS.items() if not any(k[0] == cid for k in ENGINE_GAPS)]
    summary = bench.summarise(clean)
    assert summary.detected == summary.n
    assert summary.graded["weaken"] == summary.n and summary.graded["skip"] == summary.n
    assert summary.rate("fix") >= 0.95
    for kind in ("skip", "weaken", "noop", "attack"):
        assert summary.succeeded.get(kind, 0) == 0, kind
