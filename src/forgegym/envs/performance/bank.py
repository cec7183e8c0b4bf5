"""``PerformanceTaskBank``: validated performance tasks served from the shipped manifest.

Every task is rebuilt deterministically from its id (structure, start state, profile);
the manifest lists the ids whose validation passed (reference succeeds, start state does
not) and the catalogue digests they were validated against.
"""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path
from typing import Any

from forgegym.core import bank as core_bank
from forgegym.core.bank import ManifestTaskBank
from forgegym.core.task import Task
from forgegym.envs.performance.generator import (
    DIFFICULTY_LEVELS,
    FAMILY,
    MANIFEST_PATH,
    SEED_TASK_ID,
    build_task,
    candidate_keys,
    digests,
    level_of,
    task_id_for,
)

__all__ = ["PerformanceTaskBank", "bank_stats", "load_manifest"]


@functools.lru_cache(maxsize=4)
def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    """The validated manifest."""
    return core_bank.load_manifest(path, rebuild="python -m forgegym.envs.performance.validate")


class PerformanceTaskBank(ManifestTaskBank):
    """The :class:`~forgegym.core.task.TaskBank` of ``Forge/Performance-v0``.

    Args:
        manifest_path: the validated manifest (default: the one shipped in ``data/``).
        validated: serve only the manifest's tasks (default). ``False`` serves every
            candidate task (used to build the manifest).
    """

    family = FAMILY
    difficulty_levels: tuple[int, ...] = DIFFICULTY_LEVELS

    def __init__(self, manifest_path: Path = MANIFEST_PATH, *, validated: bool = True) -> None:
        if validated:
            manifest = load_manifest(Path(manifest_path))
            current = digests()
            stale = [n for n, d in manifest["digests"].items() if current.get(n) != d]
            if stale:
                raise RuntimeError(
                    f"manifest is stale for structures {stale}; rebuild it with "
                    "`python -m forgegym.envs.performance.validate`"
                )
            ids = [t["id"] for t in manifest["tasks"]]
        else:
            ids = [task_id_for(*key) for key in candidate_keys()]
        super().__init__({i: level_of(i.split("/")[2]) for i in ids}, extra_ids=(SEED_TASK_ID,))

    def category_counts(self) -> dict[str, int]:
        """Tasks per structure and per start kind (for ``tasks verify``)."""
        counts: Counter[str] = Counter()
        for task_id in self._ids:
            _, name, start, _ = task_id.split("/")
            counts[name] += 1
            counts["start:" + ("bug" if start.startswith("bug") else start)] += 1
        return dict(sorted(counts.items()))

    def build(self, task_id: str) -> Task:
        return _build(task_id)


@functools.lru_cache(maxsize=256)
def _build(task_id: str) -> Task:
    return build_task(task_id)


def bank_stats(bank: PerformanceTaskBank) -> dict[str, int]:
    """Tasks per structure and per start kind (for ``tasks verify`` and ``eval``)."""
    return bank.category_counts()
