"""Building one task from its id builds only that variant, and it is the very spec the
eager per-module build makes (the variants that exist, their seeded draws and content)."""

from __future__ import annotations

import copy
import random

import pytest

from forgegym.core.task import UnknownTaskError
from forgegym.envs.refactor.bank import _remap, _usable, find_spec, load_manifest
from forgegym.envs.refactor.kinds import complexity, kinds, spec_for_variant, specs_for_module
from forgegym.envs.refactor.spec import RefactorSpec

CORPUS_MODULES = ("stats", "money", "intervals")


def _modules(kind: str, level: int) -> list[str]:
    if kind in ("split_package", "rename_alias", "dead_code"):
        return list(CORPUS_MODULES)
    return sorted({s.module for s in kinds()[kind](level)})


def _same(lazy: RefactorSpec | None, eager: RefactorSpec) -> None:
    assert lazy is not None, eager.task_id
    assert lazy == eager, eager.task_id  # every field but the oracle factory
    assert lazy.oracle == eager.oracle and lazy.origin_key == eager.origin_key


@pytest.mark.parametrize("kind", sorted(kinds()))
def test_each_variant_built_alone_equals_the_eager_build(kind: str) -> None:
    for level in (1, 2, 3):
        for module in _modules(kind, level):
            eager = specs_for_module.__wrapped__(kind, level, module)  # type: ignore[attr-defined]
            assert eager, (kind, level, module)
            for spec in eager:
                _same(spec_for_variant(kind, level, module, spec.variant), spec)
            made = {s.variant for s in eager}
            # Variants the eager build skips (duplicates, no place for the change) stay absent.
            for index in range(12):
                if f"d{level}v{index}" not in made:
                    assert spec_for_variant(kind, level, module, f"d{level}v{index}") is None


def test_served_tasks_rebuild_the_validated_originals_and_checks() -> None:
    """Every kind x level of the manifest, built from the id alone, has the origin key
    (original files, hidden calls, oracle) the manifest validated."""
    seen: dict[tuple[str, int], int] = {}
    for entry in load_manifest()["tasks"]:
        key = (entry["kind"], entry["level"])
        if seen.get(key, 0) >= 3:
            continue
        seen[key] = seen.get(key, 0) + 1
        spec = find_spec(entry["task_id"])
        assert spec.task_id == entry["task_id"]
        assert spec.origin_key == entry["origin_key"], entry["task_id"]
    assert len(seen) == len(kinds()) * 3


def test_one_task_builds_one_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    real = complexity._make

    def counting(level: int, variant: str, drawn: object) -> RefactorSpec:
        made.append(variant)
        return real(level, variant, drawn)  # type: ignore[arg-type]

    monkeypatch.setattr(complexity, "_make", counting)
    (first, *rest) = complexity.build_all(2)
    assert len(made) == len(rest) + 1
    made.clear()
    last = rest[-1]
    assert spec_for_variant("reduce_complexity", 2, last.module, last.variant) == last
    assert made == [last.variant]


def test_unknown_ids_are_unknown() -> None:
    for task_id in (
        "refactor/nope/stats/d1v0",
        "refactor/split_package/nope/d1v0",
        "refactor/split_package/stats/d1v99",
        "refactor/extract_helper/text_tools/d3v0",  # level 3 makes text_utils
        "refactor/split_package/money/seed",
    ):
        with pytest.raises(UnknownTaskError):
            find_spec(task_id)


def test_usable_checks_and_their_outcomes_in_one_pass_equal_the_two_step_path() -> None:
    """The original's timed-out steps are dropped exactly as ``RefactorSpec.usable`` and
    ``_remap`` drop them (none, some, all), stateless and stateful kinds alike."""
    manifest = load_manifest()
    rng = random.Random(0)
    seen: set[tuple[str, int]] = set()
    for entry in manifest["tasks"]:
        if (entry["kind"], entry["level"]) in seen:
            continue
        seen.add((entry["kind"], entry["level"]))
        full = find_spec(entry["task_id"])
        for share in (0.0, 0.1, 0.6, 1.0):
            outcomes = copy.deepcopy(manifest["outcomes"][entry["origin_key"]])
            for outcome in (o for seq in outcomes for o in seq):
                if rng.random() < share:
                    outcome.clear()
                    outcome["e"] = rng.choice(["StepTimeout", "Skipped"])
            usable = full.usable(outcomes)
            spec, kept = _usable(full, outcomes)
            assert spec == usable and (spec is full) == (usable is full), entry["task_id"]
            assert kept == _remap(full, usable, outcomes), entry["task_id"]
    assert len(seen) == len(kinds()) * 3
