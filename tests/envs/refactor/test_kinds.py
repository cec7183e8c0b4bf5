"""Task kinds: every kind builds deterministic specs whose reference reaches the whole
structure with the API and integrity intact, from a start that has none of it (static
checks only; the sandboxed validation is in test_validation)."""

from __future__ import annotations

import pytest

from forgegym.envs.refactor.integrity import integrity_findings
from forgegym.envs.refactor.kinds import kinds, specs_for_module
from forgegym.envs.refactor.spec import RefactorSpec
from forgegym.envs.refactor.static import api_score
from forgegym.envs.refactor.structure import structure_score

CORPUS_KINDS = ("split_package", "rename_alias", "dead_code")
TEMPLATE_KINDS = ("extract_helper", "reduce_complexity", "state_to_object")


def _sample() -> list[RefactorSpec]:
    specs: list[RefactorSpec] = []
    for kind in CORPUS_KINDS:
        for level in (1, 2, 3):
            for module in ("stats", "money"):
                specs.extend(specs_for_module(kind, level, module)[:1])
    for kind in TEMPLATE_KINDS:
        for level in (1, 2, 3):
            specs.extend(kinds()[kind](level)[:2])
    return specs


SAMPLE = _sample()


def _after(spec: RefactorSpec) -> dict[str, str]:
    files = {p: c for p, c in spec.files.items() if p not in spec.deleted}
    files.update(spec.reference)
    return files


def test_at_least_six_kinds_at_three_levels() -> None:
    assert len(kinds()) >= 6
    assert {s.kind for s in SAMPLE} == set(kinds())
    assert {s.level for s in SAMPLE} == {1, 2, 3}


@pytest.mark.parametrize("spec", SAMPLE, ids=lambda s: s.task_id)
def test_reference_reaches_the_structure_and_the_start_has_none(spec: RefactorSpec) -> None:
    for path, text in {**spec.files, **spec.reference}.items():
        compile(text, path, "exec")
    start, _ = structure_score(spec.files, spec.structure)
    done, missed = structure_score(_after(spec), spec.structure)
    assert start == 0.0
    assert done == 1.0, missed
    assert api_score(_after(spec), spec.api, spec.original) == (1.0, [])
    assert api_score(spec.files, spec.api, spec.original) == (1.0, [])
    starting = {p: spec.files[p] for p in spec.editable}
    agent_files = {p: c for p, c in _after(spec).items() if p not in spec.visible_tests}
    assert integrity_findings(agent_files, starting, spec.original, spec.integrity) == []


def test_specs_are_deterministic_and_ids_unique() -> None:
    again = specs_for_module.__wrapped__("split_package", 2, "money")  # type: ignore[attr-defined]
    first = specs_for_module("split_package", 2, "money")
    assert [s.reference for s in again] == [s.reference for s in first]
    ids = [s.task_id for s in SAMPLE]
    assert len(ids) == len(set(ids))


def test_the_seed_stats_task_asks_for_the_issue_layout() -> None:
    (seed,) = [s for s in specs_for_module("split_package", 1, "stats") if s.variant == "seed"]
    assert seed.task_id == "refactor/split_package/stats/seed"
    assert set(seed.reference) == {
        "stats/__init__.py",
        "stats/central.py",
        "stats/spread.py",
        "stats/_common.py",
    }
    assert seed.deleted == ("stats.py",)
    assert "from stats import mean, median, std_dev, percentile" in seed.description
    init = seed.reference["stats/__init__.py"]
    assert "import *" not in init and "percentile" in init


def test_integrity_catches_the_monolith_left_behind_and_copies() -> None:
    (seed,) = [s for s in specs_for_module("split_package", 1, "stats") if s.variant == "seed"]
    starting = {"stats.py": seed.files["stats.py"]}
    stub = {
        "stats.py": seed.files["stats.py"],
        "stats/__init__.py": "from stats.central import mean, median\n",
        "stats/central.py": seed.reference["stats/central.py"],
    }
    problems = integrity_findings(stub, starting, seed.original, seed.integrity)
    assert any(p.startswith("monolith_left") for p in problems)
    copied = {**seed.reference, "stats/_old.py": seed.files["stats.py"]}
    problems = integrity_findings(copied, starting, seed.original, seed.integrity)
    assert any(p.startswith("copied: mean") for p in problems)
    elided = dict(seed.reference)
    elided["stats/spread.py"] = (
        elided["stats/spread.py"]
        .replace("    ordered = sorted(values)\n", "    ...\n", 1)
        .replace("    rank = (len(ordered) - 1) * q / 100\n", "")
    )
    elided["stats/spread.py"] = (
        elided["stats/spread.py"].split("    low = math.floor")[0] + "    return 0\n"
    )
    problems = integrity_findings(elided, starting, seed.original, seed.integrity)
    assert any(p.startswith("elided: percentile") for p in problems)


def test_an_unused_copy_of_original_code_is_gated_but_renames_and_starting_dead_code_are_not() -> (
    None
):
    """The old code kept under a new name nothing calls is a copy, not a refactoring
    (whatever the function budget allows); a renamed function its deprecated alias
    calls, and dead code the task started with, are not."""
    original = {
        "shapes.py": (
            "def area(kind, a, b=0):\n"
            "    if kind == 'square':\n        return a * a\n"
            "    if kind == 'rect':\n        return a * b\n"
            "    raise ValueError(kind)\n"
        )
    }
    body = original["shapes.py"].split("\n", 1)[1]
    refactored = (
        "def _square(a):\n    return a * a\n\n\n"
        "def area(kind, a, b=0):\n"
        "    if kind == 'square':\n        return _square(a)\n"
        "    if kind == 'rect':\n        return a * b\n"
        "    raise ValueError(kind)\n"
    )
    rules = {"allow_star": False}
    assert integrity_findings({"shapes.py": refactored}, original, original, rules) == []
    kept = refactored + "\n\ndef _legacy_area(kind, a, b=0):\n" + body
    problems = integrity_findings({"shapes.py": kept}, original, original, rules)
    assert problems == ["copied: _legacy_area in shapes.py is an unused copy of the original area"]
    renamed = (
        "import warnings\n\n\ndef surface(kind, a, b=0):\n" + body + "\n\n"
        "def area(kind, a, b=0):\n"
        "    warnings.warn('use surface', DeprecationWarning, stacklevel=2)\n"
        "    return surface(kind, a, b)\n"
    )
    assert integrity_findings({"shapes.py": renamed}, original, original, rules) == []
    started_dead = {"shapes.py": kept}  # the task's own dead code, left in place
    assert integrity_findings({"shapes.py": kept}, started_dead, original, rules) == []
