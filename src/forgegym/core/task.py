"""Tasks and task banks: the one protocol every family implements.

A :class:`Task` is everything needed to run one episode. Its ``files`` are what the
agent sees (editable files, visible tests, support files); ``hidden`` holds grading
data that never reaches the agent's workspace or observation (hidden differential
checks, ground-truth diagnoses, chaos schedules); ``reference`` is the task's own
solution, used by the ``reference`` policy and by validation.

A :class:`TaskBank` serves tasks by id and by seeded sampling. Task ids are stable
and self-describing (``bugfix/chunk_list/d2/4711``) so ``get(task_id)`` regenerates
the same task in any process without shipping state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Task", "TaskBank", "UnknownTaskError"]


class UnknownTaskError(KeyError):
    """``TaskBank.get`` was given an id the bank cannot produce."""


class Task(BaseModel):
    """One episode's task."""

    model_config = ConfigDict(frozen=True)

    task_id: str = Field(min_length=1)
    family: str
    difficulty: int = Field(ge=0)
    title: str
    description: str = Field(description="The problem statement shown to the agent.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Agent-visible files: path -> content."
    )
    editable_files: tuple[str, ...] = ()
    creatable: tuple[str, ...] = Field(
        default=(),
        description="Glob patterns (fnmatch, '/'-separated) of new files the agent may "
        "create; when set, the agent may also delete and move editable and created files "
        "(a package split needs it). Empty: the file set is fixed.",
    )
    visible_test_files: tuple[str, ...] = ()
    visible_test_ids: tuple[str, ...] = Field(
        default=(), description="pytest node ids of the visible tests (the expected set)."
    )
    hidden: dict[str, Any] = Field(
        default_factory=dict, description="Grading data; never shown or written to the workspace."
    )
    reference: dict[str, str] = Field(
        default_factory=dict, description="Reference solution: path -> full content."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _files_consistent(self) -> Task:
        for path in (*self.editable_files, *self.visible_test_files):
            if path not in self.files:
                raise ValueError(f"{path!r} is listed but not present in files")
        for path in self.reference:
            if path not in self.editable_files and not self.may_create(path):
                raise ValueError(f"reference edits non-editable file {path!r}")
        for pattern in self.creatable:
            if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
                raise ValueError(f"creatable pattern {pattern!r} must be relative")
        return self

    def may_create(self, path: str) -> bool:
        """Whether the agent may create ``path`` (a new file matching ``creatable`` that is
        not one of the task's own files)."""
        from forgegym.sandbox.workspace import creatable_path

        return path not in self.files and creatable_path(path, self.creatable)


@runtime_checkable
class TaskBank(Protocol):
    """What a family provides to :class:`~forgegym.core.env.ForgeEnv` and the curriculum."""

    family: str
    #: Difficulty levels the bank can produce, easiest first.
    difficulty_levels: tuple[int, ...]

    def get(self, task_id: str) -> Task:
        """Return the task with this id (regenerated deterministically); raise
        :class:`UnknownTaskError` for an id the bank cannot produce."""
        ...

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        """Draw one task using ``rng`` (and only ``rng``), optionally at a difficulty."""
        ...

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> Sequence[str]:
        """``n`` distinct task ids, deterministic in ``seed`` (for datasets, curricula and
        validation). Banks with fewer than ``n`` tasks return all they have."""
        ...
