"""``OversightTaskBank``: the validated offline worker bank, served by id.

The shipped manifest (``data/manifest.json``, built once by
``python -m forgegym.envs.oversight.build.manifest``) lists the text episodes that passed
validation per domain and the code-domain variants validated in the sandbox. Every task
is rebuilt deterministically from its id, so ``get`` gives identical tasks in any
process.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from forgegym.core import bank as core_bank
from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.oversight.episodes import (
    ALL_DOMAINS,
    CODE_DOMAIN,
    DIFFICULTY_OF,
    FAMILY,
    build_code_task,
    build_text_task,
    text_corruption,
)

__all__ = ["MANIFEST_PATH", "OversightBank", "OversightTaskBank", "bank_stats", "load_manifest"]

MANIFEST_PATH = Path(__file__).parent / "data" / "manifest.json"


@functools.lru_cache(maxsize=4)
def load_manifest(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    """The validated manifest."""
    return core_bank.load_manifest(path, rebuild="python -m forgegym.envs.oversight.build.manifest")


class OversightTaskBank:
    """Serves the bank's episodes (see the module docstring).

    Args:
        manifest: a parsed manifest (default: the shipped one).
        domains: restrict the bank to these domains (default: all six).
    """

    family = FAMILY
    difficulty_levels: tuple[int, ...] = (1, 2, 3)

    def __init__(
        self, manifest: dict[str, Any] | None = None, domains: Sequence[str] | None = None
    ) -> None:
        self.manifest = manifest if manifest is not None else load_manifest()
        if domains is not None:
            unknown = [d for d in domains if d not in ALL_DOMAINS]
            if unknown or not domains:
                raise ValueError(f"domains: unknown {unknown}; choose from {list(ALL_DOMAINS)}")
        self.domains = tuple(domains) if domains is not None else ALL_DOMAINS
        self._code: list[dict[str, Any]] = list(self.manifest.get("code", []))
        ids: list[str] = []
        for domain in self.domains:
            if domain == CODE_DOMAIN:
                ids.extend(f"{FAMILY}/{CODE_DOMAIN}/{i}" for i in range(len(self._code)))
            else:
                ids.extend(f"{FAMILY}/{domain}/{i}" for i in self.manifest["text"].get(domain, []))
        self._ids = tuple(ids)
        self._known = frozenset(ids)
        self._by_level: dict[int, tuple[str, ...]] = {
            level: tuple(i for i in ids if DIFFICULTY_OF[i.split("/")[1]] == level)
            for level in self.difficulty_levels
        }

    def __len__(self) -> int:
        return len(self._ids)

    def ids(self, difficulty: int | None = None) -> tuple[str, ...]:
        """Every task id, or those of one difficulty level (the banks' one API)."""
        if difficulty is None:
            return self._ids
        if difficulty not in self._by_level:
            raise ValueError(f"difficulty: no episodes at level {difficulty}")
        return self._by_level[difficulty]

    def get(self, task_id: str) -> Task:
        if task_id not in self._known:
            raise UnknownTaskError(task_id)
        return _build(task_id, self._code_entry(task_id))

    def _code_entry(self, task_id: str) -> dict[str, Any] | None:
        _, domain, index = task_id.split("/")
        return self._code[int(index)] if domain == CODE_DOMAIN else None

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        pool = self._ids if difficulty is None else self._by_level[difficulty]
        if not pool:
            raise ValueError(f"difficulty: no episodes at level {difficulty}")
        return self.get(pool[int(rng.integers(0, len(pool)))])

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> Sequence[str]:
        pool = list(self._ids if difficulty is None else self._by_level[difficulty])
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(pool))
        return [pool[i] for i in order[: max(0, n)]]

    def corruption_of(self, task_id: str) -> str | None:
        """Ground truth of an id (for statistics after grading; never for policies)."""
        _, domain, index = task_id.split("/")
        if domain == CODE_DOMAIN:
            return self._code[int(index)]["variant"].get("corruption")
        return text_corruption(domain, int(index))

    def category_counts(self) -> dict[str, int]:
        """Episodes per ``domain/corruption`` (``clean`` for clean ones)."""
        counts: Counter[str] = Counter()
        for task_id in self._ids:
            counts[f"{task_id.split('/')[1]}/{self.corruption_of(task_id) or 'clean'}"] += 1
        return dict(sorted(counts.items()))


@functools.lru_cache(maxsize=4096)
def _build_cached(task_id: str, entry_json: str | None) -> Task:
    _, domain, index = task_id.split("/")
    if domain == CODE_DOMAIN:
        assert entry_json is not None
        return build_code_task(int(index), json.loads(entry_json))
    return build_text_task(domain, int(index))


def _build(task_id: str, entry: dict[str, Any] | None) -> Task:
    return _build_cached(task_id, json.dumps(entry, sort_keys=True) if entry else None)


def bank_stats(bank: OversightTaskBank) -> dict[str, int]:
    """Episodes per ``domain/corruption`` (for ``tasks verify``)."""
    return bank.category_counts()


#: The name this bank had before the families shared one naming convention.
OversightBank = OversightTaskBank
