"""``FlakyRepairTaskBank``: the validated FlakyRepair scenarios, rebuilt by id from the manifest
(:mod:`.generator` generates and validates them)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from forgegym.core import bank as core_bank
from forgegym.core.bank import ManifestTaskBank
from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.flaky.generator import DIFFICULTIES, MANIFEST_PATH, fingerprint, generate
from forgegym.envs.flaky.templates import CATEGORIES

__all__ = ["FlakyRepairTaskBank", "FlakyTaskBank", "bank_stats", "load_manifest"]


def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    """The validated manifest (empty if absent)."""
    return core_bank.load_manifest(
        path,
        rebuild="python -m forgegym.envs.flaky.generator",
        default={"reruns": 0, "entries": []},
    )


class FlakyRepairTaskBank(ManifestTaskBank):
    """The validated FlakyRepair scenarios (a :class:`~forgegym.core.bank.ManifestTaskBank`).

    Args:
        manifest: a manifest mapping (default: the shipped ``data/manifest.json``).
        categories: restrict to these root-cause categories (``None``: all).
    """

    family = "flaky"
    difficulty_levels: tuple[int, ...] = DIFFICULTIES

    def __init__(
        self, manifest: dict[str, Any] | None = None, categories: Sequence[str] | None = None
    ) -> None:
        data = manifest if manifest is not None else load_manifest()
        if categories is not None:
            unknown = sorted(set(categories) - set(CATEGORIES))
            if unknown:
                raise ValueError(f"categories: unknown {unknown}; known: {list(CATEGORIES)}")
        entries = [
            e
            for e in data.get("entries", [])
            if e.get("valid") and (categories is None or e["category"] in categories)
        ]
        self.manifest_reruns = int(data.get("reruns", 0))
        self.entries: dict[str, dict[str, Any]] = {e["task_id"]: e for e in entries}
        if not self.entries:
            raise ValueError("manifest: no validated scenarios (run build_manifest first)")
        super().__init__({t: int(e["difficulty"]) for t, e in self.entries.items()})

    def category_counts(self) -> dict[str, int]:
        """Validated scenarios per root-cause category (``flaky/<category>/...`` ids)."""
        counts: dict[str, int] = {}
        for task_id in self._ids:
            category = task_id.split("/")[1]
            counts[category] = counts.get(category, 0) + 1
        return dict(sorted(counts.items()))

    def build(self, task_id: str) -> Task:
        task = generate(task_id)
        expected = self.entries[task_id].get("fingerprint")
        if expected and fingerprint(task.files) != expected:
            raise UnknownTaskError(f"{task_id!r}: manifest is stale (fingerprint mismatch)")
        return task

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        pool = list(self.ids(difficulty))
        random.Random(seed).shuffle(pool)
        return pool[: max(0, n)]

    def baseline(self, task_id: str) -> float | None:
        """The manifest's baseline pass rate (for the manifest's rerun count)."""
        entry = self.entries.get(task_id)
        return None if entry is None else entry.get("baseline_pass_rate")


def bank_stats(bank: Any) -> dict[str, int]:
    """Validated scenarios per root-cause category (``{}`` for a one-repo bank)."""
    return bank.category_counts() if isinstance(bank, FlakyRepairTaskBank) else {}


#: The name before issue 35 (every family's bank is ``<Stem>TaskBank``): kept importable.
FlakyTaskBank = FlakyRepairTaskBank
