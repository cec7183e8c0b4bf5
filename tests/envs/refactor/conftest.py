"""Shared by the Refactor tests that grade a changed reference through the env."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from forgegym.envs.refactor.bank import RefactorTaskBank
from forgegym.envs.refactor.env import RefactorEnv
from forgegym.envs.refactor.policies import action_text


@pytest.fixture(scope="module")
def refactor_env() -> Iterator[RefactorEnv]:
    """One env over the shipped bank per test module (one step per episode)."""
    out = RefactorEnv(task_bank=RefactorTaskBank(), max_steps=1)
    yield out
    out.close()


def reference_change_succeeds(
    env: RefactorEnv, task_id: str, path: str, old: str, new: str
) -> bool:
    """Whether the task's reference refactoring with ``old`` replaced by ``new`` in
    ``path`` (once) reaches success through the env."""
    task = env.unwrapped.task_bank.get(task_id)  # type: ignore[attr-defined]
    files = dict(task.reference)
    assert files[path].count(old) == 1, old
    files[path] = files[path].replace(old, new)
    env.reset(options={"task_id": task_id})
    edits = [{"path": p, "content": c} for p, c in sorted(files.items()) if task.files.get(p) != c]
    _, _, _, _, info = env.step(action_text(edits))
    return bool(info["success"])
