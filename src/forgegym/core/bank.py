"""A task bank over a validated manifest: the part every manifest-backed family shares.

A family's validated manifest lists task ids (and their levels); each task is rebuilt
deterministically from its id. :class:`ManifestTaskBank` implements the
:class:`~forgegym.core.task.TaskBank` protocol over such a list: ids per level,
seeded sampling and ``task_ids``, ``get`` with a clear error for an unknown id, and
a per-bank cache of built tasks. A family subclasses it, passes its ids to
``__init__`` and implements :meth:`ManifestTaskBank.build`::

    class MyTaskBank(ManifestTaskBank):
        family = "mine"
        difficulty_levels = (1, 2, 3)

        def __init__(self, manifest_path: Path = MANIFEST_PATH) -> None:
            manifest = load_manifest(manifest_path)
            super().__init__({t["id"]: t["level"] for t in manifest["tasks"]})

        def build(self, task_id: str) -> Task:
            return build_task(task_id)
"""

from __future__ import annotations

import functools
import gzip
import json
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from forgegym.core.task import Task, UnknownTaskError

__all__ = ["ManifestTaskBank", "load_manifest"]


def load_manifest(
    path: Path, *, rebuild: str, default: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A family's validated manifest (JSON, or gzip-compressed JSON for ``*.gz``).

    A missing file is a ``FileNotFoundError`` that names the command rebuilding it
    (``rebuild``), unless ``default`` is given (returned instead).
    """
    if not path.is_file():
        if default is not None:
            return default
        raise FileNotFoundError(f"{path} is missing; regenerate it with `{rebuild}`")
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            loaded: dict[str, Any] = json.load(handle)
            return loaded
    loaded = json.loads(path.read_text(encoding="utf-8"))
    return loaded


class ManifestTaskBank(ABC):
    """A :class:`~forgegym.core.task.TaskBank` over a fixed set of validated task ids.

    Args:
        levels: task id -> difficulty level (every level must be one of
            ``difficulty_levels``).
        extra_ids: ids ``get`` also serves that sampling never draws (e.g. a seed task
            kept for examples).
        cache_size: built tasks kept per bank.
    """

    family: str
    difficulty_levels: tuple[int, ...]

    def __init__(
        self,
        levels: Mapping[str, int],
        *,
        extra_ids: Collection[str] = (),
        cache_size: int = 256,
    ) -> None:
        unknown = sorted({lv for lv in levels.values() if lv not in self.difficulty_levels})
        if unknown:
            raise ValueError(
                f"levels: {unknown} are not among {list(self.difficulty_levels)} "
                f"of family {self.family!r}"
            )
        self._ids: tuple[str, ...] = tuple(sorted(levels))
        self._by_level = {
            level: tuple(i for i in self._ids if levels[i] == level)
            for level in self.difficulty_levels
        }
        self._known = frozenset(self._ids) | frozenset(extra_ids)
        self._extra_ids: tuple[str, ...] = tuple(sorted(set(extra_ids) - set(self._ids)))
        self._get = functools.lru_cache(maxsize=cache_size)(self.build)

    @abstractmethod
    def build(self, task_id: str) -> Task:
        """The task of a known id (pure and deterministic: a fresh process rebuilds it)."""

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._known

    def get(self, task_id: str) -> Task:
        """The task with this id; :class:`UnknownTaskError` for an id the bank lacks."""
        if not isinstance(task_id, str) or task_id not in self._known:
            raise UnknownTaskError(f"no {self.family} task {task_id!r}")
        return self._get(task_id)

    @property
    def extra_ids(self) -> tuple[str, ...]:
        """Ids :meth:`get` also serves that :meth:`ids`, sampling and ``task_ids`` leave
        out (e.g. Performance's documented seed task ``performance/lru/seed``, the
        starting point of its examples, which is not a validated bank task)."""
        return self._extra_ids

    def ids(self, difficulty: int | None = None) -> tuple[str, ...]:
        """Every task id (at ``difficulty``), sorted."""
        if difficulty is None:
            return self._ids
        if difficulty not in self._by_level:
            raise ValueError(f"difficulty must be one of {list(self.difficulty_levels)}")
        return self._by_level[difficulty]

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        """One task drawn with ``rng`` (and only ``rng``)."""
        ids = self.ids(difficulty)
        if not ids:
            raise ValueError(f"difficulty: no {self.family} tasks at level {difficulty}")
        return self.get(ids[int(rng.integers(len(ids)))])

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        """``n`` distinct ids (all, if fewer), deterministic in ``seed``."""
        ids = self.ids(difficulty)
        order = np.random.default_rng(seed).permutation(len(ids))
        return [ids[int(i)] for i in order[: max(0, n)]]
