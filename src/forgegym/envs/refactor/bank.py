"""``RefactorTaskBank``: validated refactoring tasks served from the shipped manifest.

A task is rebuilt deterministically from its id (kind, module, variant) by the kind's
builder; the manifest adds what needs the sandbox to know -- the original module's
outcomes on the hidden checks (the expected values) and the validation record (mutant
kill rate). ``get`` runs nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from forgegym.core import bank as core_bank
from forgegym.core.bank import ManifestTaskBank
from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.refactor.adequacy_checks import merged_checks
from forgegym.envs.refactor.api_test import refactoring_test
from forgegym.envs.refactor.checking import expected_outcomes
from forgegym.envs.refactor.corpus import DATA_DIR
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.envs.refactor.kinds import kinds, spec_for_variant, specs_for_module
from forgegym.envs.refactor.spec import RefactorSpec
from forgegym.rewards.diff import diff_stats

__all__ = [
    "DIFFICULTY_LEVELS",
    "bank_stats",
    "original_files",
    "FAMILY",
    "MANIFEST_PATH",
    "RefactorTaskBank",
    "load_manifest",
    "spec_to_task",
    "specs_for",
]

FAMILY = "refactor"
DIFFICULTY_LEVELS: tuple[int, ...] = (1, 2, 3)
MANIFEST_PATH = DATA_DIR / "manifest.json.gz"
SEED_TASK_ID = "refactor/split_package/stats/seed"
#: Outcomes of steps the original itself could not answer (see RefactorSpec.usable).
_BAD = frozenset({"StepTimeout", "Skipped"})


@functools.lru_cache(maxsize=4)
def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    """The validated manifest."""
    return core_bank.load_manifest(path, rebuild="python -m forgegym.envs.refactor.build.manifest")


def specs_for(kind: str, level: int, module: str) -> dict[str, RefactorSpec]:
    """The specs a kind builds for one module at a level, by task id (deterministic)."""
    if kind not in kinds():
        raise UnknownTaskError(kind)
    return {spec.task_id: spec for spec in specs_for_module(kind, level, module)}


def find_spec(task_id: str) -> RefactorSpec:
    parts = task_id.split("/")
    if len(parts) != 4 or parts[0] != FAMILY:
        raise UnknownTaskError(task_id)
    kind, module, variant = parts[1], parts[2], parts[3]
    if variant == "seed":
        levels: Iterable[int] = DIFFICULTY_LEVELS
    elif len(variant) > 1 and variant[0] == "d" and variant[1].isdigit():
        levels = [int(variant[1])]
    else:
        raise UnknownTaskError(task_id)
    if kind not in kinds():
        raise UnknownTaskError(task_id)
    for level in levels:
        if level in DIFFICULTY_LEVELS:
            # Only this variant is built (its siblings are drafted, not built).
            spec = spec_for_variant(kind, level, module, variant)
            if spec is not None:
                return spec
    raise UnknownTaskError(task_id)


def spec_to_task(
    spec: RefactorSpec,
    origin_outcomes: list[list[dict[str, Any]]],
    record: dict[str, Any] | None = None,
    adequacy: dict[str, Any] | None = None,
) -> Task:
    """The :class:`Task` of a spec, given the original's outcomes on its checks (steps
    the original itself could not answer in time are dropped) and the manifest's
    adequacy record of its original (:mod:`.adequacy`; appended to the checks)."""
    full = spec
    spec, outcomes = _usable(full, origin_outcomes)
    checks, outcomes = merged_checks(spec, spec.checks, outcomes, adequacy)
    starting = {p: spec.files[p] for p in spec.editable}
    after = {p: c for p, c in starting.items() if p not in spec.deleted}
    after.update(spec.reference)
    lines = diff_stats(starting, after).lines_changed
    hidden = RefactorHidden(
        kind=spec.kind,
        module=spec.module,
        checks=checks,
        expected=expected_outcomes(checks, outcomes),
        api=spec.api,
        structure=spec.structure,
        integrity=spec.integrity,
        # The original module, unless it is the starting file the agent sees anyway.
        original={p: (None if spec.files.get(p) == c else c) for p, c in spec.original.items()},
        diff_budget=math.ceil(1.5 * lines) + 5,
        focus=list(spec.focus),
        reference_deleted=list(spec.deleted),
        validation=record or {},
    )
    files, visible_ids = dict(spec.files), spec.visible_test_ids
    if len(spec.visible_tests) == 1:
        # The visible test that fails on the shown code in every task of the kind (the
        # new path's import, or the structure the statement asks for) and checks one
        # hidden input; a canary contradicts that value (design note 006, D3/D6).
        test_path = spec.visible_tests[0]
        aliases = {str(a["name"]): str(a["like"]) for a in spec.api if a.get("like")}
        made = refactoring_test(
            spec.task_id,
            spec.kind,
            spec.module,
            files[test_path],
            checks,
            hidden.expected,
            structure=spec.structure,
            reference=after,
            aliases=aliases,
        )
        if made is not None:
            files[test_path], test_name = made
            visible_ids = (*visible_ids, f"{test_path}::{test_name}")
    return Task(
        task_id=spec.task_id,
        family=FAMILY,
        difficulty=spec.level,
        title=spec.title,
        description=spec.description,
        files=files,
        editable_files=spec.editable,
        creatable=spec.creatable,
        visible_test_files=spec.visible_tests,
        visible_test_ids=visible_ids,
        hidden=hidden,
        reference=dict(spec.reference),
        metadata={"kind": spec.kind, "module": spec.module, "level": spec.level},
    )


def original_files(task: Task) -> dict[str, str]:
    """The task's original module files (see :attr:`RefactorHidden.original`)."""
    original = RefactorHidden.of(task).original
    return {p: (c if c is not None else task.files[p]) for p, c in original.items()}


def _usable(
    full: RefactorSpec, origin_outcomes: list[list[dict[str, Any]]]
) -> tuple[RefactorSpec, list[list[dict[str, Any]]]]:
    """``full.usable(origin_outcomes)`` and the original's outcomes on its steps (what
    :func:`_remap` gives); stateless checks in one pass over the steps."""
    if not full.stateless:
        spec = full.usable(origin_outcomes)
        return spec, _remap(full, spec, origin_outcomes)
    (steps,) = full.checks
    keys = [json.dumps([s["o"], s["a"]], sort_keys=True) for s in steps]
    # The original answered each distinct call once, in first-seen order.
    index = dict(zip(dict.fromkeys(keys), origin_outcomes[0], strict=True))
    outs = [index[k] for k in keys]
    kept = [(s, o) for s, o in zip(steps, outs, strict=True) if o.get("e") not in _BAD]
    checks = [[s for s, _ in kept]] if kept else []
    spec = full if checks == full.checks else dataclasses.replace(full, checks=checks)
    return spec, [[o for _, o in kept]] if kept else []


def _remap(
    full: RefactorSpec, spec: RefactorSpec, origin_outcomes: list[list[dict[str, Any]]]
) -> list[list[dict[str, Any]]]:
    """The original's outcomes for the steps kept by :meth:`RefactorSpec.usable`."""
    if full.stateless:
        index = {
            json.dumps([c["t"], c["a"]], sort_keys=True): o
            for c, o in zip(full.origin_sequences()[0], origin_outcomes[0], strict=True)
        }
        return [
            [index[json.dumps([s["o"], s["a"]], sort_keys=True)] for s in seq]
            for seq in spec.checks
        ]
    kept = {json.dumps(seq, sort_keys=True) for seq in spec.checks}
    return [
        outs
        for seq, outs in zip(full.checks, origin_outcomes, strict=True)
        if json.dumps(seq, sort_keys=True) in kept
    ]


class RefactorTaskBank(ManifestTaskBank):
    """Implements :class:`forgegym.core.task.TaskBank` over the validated manifest.

    Args:
        kinds: restrict to these kinds (``None``: all); ``ValueError`` on an unknown one.
        manifest: an already loaded manifest (default: the shipped one).
    """

    family = FAMILY
    difficulty_levels = DIFFICULTY_LEVELS

    def __init__(
        self, kinds: Sequence[str] | None = None, manifest: dict[str, Any] | None = None
    ) -> None:
        self._manifest = manifest if manifest is not None else load_manifest()
        entries = self._manifest["tasks"]
        known = sorted({e["kind"] for e in entries})
        if kinds is not None:
            unknown = [k for k in kinds if k not in known]
            if unknown or not kinds:
                raise ValueError(f"kinds: unknown kinds {unknown or list(kinds)}; known: {known}")
        self._entries = {e["task_id"]: e for e in entries if kinds is None or e["kind"] in kinds}
        super().__init__({t: int(e["level"]) for t, e in self._entries.items()})

    def category_counts(self) -> dict[str, int]:
        """Validated tasks per kind."""
        return dict(sorted(Counter(e["kind"] for e in self._entries.values()).items()))

    def stats(self) -> dict[str, int]:
        entries = list(self._entries.values())
        counts: dict[str, int] = {}
        for e in entries:
            counts[f"kind:{e['kind']}"] = counts.get(f"kind:{e['kind']}", 0) + 1
            counts[f"level:{e['level']}"] = counts.get(f"level:{e['level']}", 0) + 1
        rates = [e["validation"]["kill_rate"] for e in entries]
        counts["mutant_kill>=90%"] = sum(r >= 0.9 for r in rates)
        counts["mutant_kill_min_pct"] = int(min(rates, default=0.0) * 100)
        counts["mutants_sampled"] = sum(e["validation"]["mutants"] for e in entries)
        return dict(sorted(counts.items()))

    def build(self, task_id: str) -> Task:
        entry = self._entries[task_id]
        spec = find_spec(task_id)
        outcomes = self._manifest["outcomes"][entry["origin_key"]]
        adequacy = self._manifest.get("adequacy", {}).get(entry["origin_key"])
        return spec_to_task(spec, outcomes, entry.get("validation"), adequacy)


def bank_stats(bank: RefactorTaskBank) -> dict[str, int]:
    """Tasks per kind and level, and the hidden checks' mutant-kill record (for
    ``forgegym tasks verify``): how many tasks kill at least 90% of the detectable
    mutants of their original, and the lowest kill rate served, in percent."""
    return bank.stats()
