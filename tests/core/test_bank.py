"""ManifestTaskBank: the TaskBank every manifest-backed family builds on."""

from __future__ import annotations

import numpy as np
import pytest

from forgegym.core.bank import ManifestTaskBank
from forgegym.core.task import Task, TaskBank, UnknownTaskError


class _Bank(ManifestTaskBank):
    family = "toy"
    difficulty_levels = (1, 2)

    def __init__(self, levels: dict[str, int], **kwargs: object) -> None:
        self.built: list[str] = []
        super().__init__(levels, **kwargs)  # type: ignore[arg-type]

    def build(self, task_id: str) -> Task:
        self.built.append(task_id)
        return Task(task_id=task_id, family="toy", difficulty=1, title=task_id, description="d")


LEVELS = {f"toy/{i}": 1 + i % 2 for i in range(10)}


def test_serves_known_ids_once_built_and_rejects_others() -> None:
    bank = _Bank(LEVELS, extra_ids=("toy/seed",))
    assert isinstance(bank, TaskBank) and len(bank) == 10
    assert bank.get("toy/3") is bank.get("toy/3") and bank.built == ["toy/3"]
    assert bank.get("toy/seed").task_id == "toy/seed"
    assert "toy/seed" not in bank.ids()  # served, never drawn
    for bad in ("toy/99", 3, None):
        with pytest.raises(UnknownTaskError, match="no toy task"):
            bank.get(bad)  # type: ignore[arg-type]


def test_sampling_is_seeded_and_respects_levels() -> None:
    bank = _Bank(LEVELS)
    assert bank.task_ids(4, seed=7) == bank.task_ids(4, seed=7)
    assert len(set(bank.task_ids(100))) == 10 and bank.task_ids(-1) == []
    assert all(LEVELS[t] == 2 for t in bank.task_ids(10, difficulty=2))
    first = bank.sample(np.random.default_rng(5), difficulty=1).task_id
    assert first == bank.sample(np.random.default_rng(5), difficulty=1).task_id
    assert LEVELS[first] == 1
    with pytest.raises(ValueError, match="difficulty"):
        bank.ids(3)


def test_bad_levels_and_empty_levels_raise_value_errors() -> None:
    with pytest.raises(ValueError, match="levels"):
        _Bank({"toy/0": 5})
    with pytest.raises(ValueError, match="no toy tasks at level 2"):
        _Bank({"toy/0": 1}).sample(np.random.default_rng(0), difficulty=2)
