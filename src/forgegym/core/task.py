"""Tasks and task banks: the one protocol every family implements.

A :class:`Task` is everything needed to run one episode. Its ``files`` are what the
agent sees (editable files, visible tests, support files); ``hidden`` holds grading
data that never reaches the agent's workspace or observation (hidden differential
checks, ground-truth diagnoses, chaos schedules); ``reference`` is the task's own
solution, used by the ``reference`` policy and by validation.

A :class:`TaskBank` serves tasks by id and by seeded sampling. Task ids are stable
and self-describing (``bugfix/chunk_list/d2/4711``) so ``get(task_id)`` regenerates
the same task in any process without shipping state.

A canary (an impossible variant of a bank task, :mod:`forgegym.tasklib.canaries`) has
the id ``canary/<base task id>`` inside the trusted process (``canary/<base id>#<k>``
for a base's k-th alternative contradiction, k >= 1, where the first failed its
validation), but is *served* under its base task's id (:func:`served_task_id`: what
``info["task_id"]`` says), so no id a policy sees tells it apart from the task it was
built on. Whoever asked for the canary (a dataset row, reset options, a grading
request) keeps the true id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, Self, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

__all__ = [
    "CANARY_PREFIX",
    "HiddenData",
    "Task",
    "TaskBank",
    "TaskList",
    "UnknownTaskError",
    "served_task_id",
    "split_canary_id",
]

#: Every canary id starts with this (then the base task's id); see the module docstring.
CANARY_PREFIX = "canary/"
#: Separates a canary's base id from the index of its alternative contradiction.
CANARY_ATTEMPT_SEPARATOR = "#"


def split_canary_id(task_id: str) -> tuple[str, int]:
    """``(base task id, attempt)`` of a canary id: ``canary/<base>`` is attempt 0,
    ``canary/<base>#<k>`` attempt ``k`` (``ValueError`` for any other id)."""
    if not task_id.startswith(CANARY_PREFIX):
        raise ValueError(f"not a canary id: {task_id!r}")
    rest = task_id[len(CANARY_PREFIX) :]
    base, separator, attempt = rest.rpartition(CANARY_ATTEMPT_SEPARATOR)
    if separator and base and attempt.isdigit() and int(attempt) >= 1 and attempt[0] != "0":
        return base, int(attempt)
    return rest, 0


def served_task_id(task_id: str) -> str:
    """The id a policy is shown for ``task_id``: a canary's base task id (issue #37, D5:
    an id must not reveal a canary, nor which of its contradictions it carries), any
    other id unchanged."""
    return split_canary_id(task_id)[0] if task_id.startswith(CANARY_PREFIX) else task_id


class UnknownTaskError(KeyError):
    """``TaskBank.get`` was given an id the bank cannot produce."""


class HiddenData(BaseModel):
    """A family's typed grading data (what ``Task.hidden`` holds), one subclass per family.

    Build a task with ``Task(..., hidden=MyHidden(...))``; read it with
    ``MyHidden.of(task)``, validated once per task and cached, so graders, policies
    and hacks read typed fields instead of string keys. ``Task.hidden`` keeps the
    model's dump (tasks stay plain data: leak checks, serving and
    fresh processes read it as before).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def of(cls, task: Task) -> Self:
        """``task.hidden`` as this model (``ValueError`` when it does not fit)."""
        cache = task._typed_hidden
        entry = cache.get(cls)
        if entry is None or entry[0] is not task.hidden:  # a copy with other hidden data
            entry = (task.hidden, cls.model_validate(task.hidden))
            cache[cls] = entry
        return entry[1]  # type: ignore[return-value]


class Task(BaseModel):
    """One episode's task."""

    # Data files are bytes: JSON carries them as base64.
    model_config = ConfigDict(frozen=True, ser_json_bytes="base64", val_json_bytes="base64")

    task_id: str = Field(min_length=1)
    family: str
    difficulty: int = Field(ge=0)
    title: str
    description: str = Field(description="The problem statement shown to the agent.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Agent-visible files: path -> content."
    )
    data_files: dict[str, bytes] = Field(
        default_factory=dict,
        description="Read-only data files: path -> bytes (a real project's compiled "
        "catalogues, binary fixtures, data modules over the text budget), copied by content "
        "into the workspace and every grading copy; never shown to the agent, never "
        "editable, trusted by content like the task's read-only files.",
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
    _typed_hidden: dict[type[HiddenData], tuple[dict[str, Any], HiddenData]] = PrivateAttr(
        default_factory=dict
    )

    @field_validator("hidden", mode="before")
    @classmethod
    def _dump_hidden(cls, value: Any) -> Any:
        if isinstance(value, HiddenData):
            return value.model_dump()
        return value

    @model_validator(mode="after")
    def _files_consistent(self) -> Task:
        for path in (*self.editable_files, *self.visible_test_files):
            if path not in self.files:
                raise ValueError(f"{path!r} is listed but not present in files")
        both = sorted(self.data_files.keys() & self.files.keys())
        if both:
            raise ValueError(f"data_files: {both[:5]} are also in files")
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

        return (
            path not in self.files
            and path not in self.data_files
            and creatable_path(path, self.creatable)
        )

    @property
    def grading_kind(self) -> str | None:
        """The kind of grader the task needs, when it is not its family's default: the
        ``kind`` its hidden data declares (Bugfix's repository and real-bank tasks:
        ``RepoHidden.kind == "repo"``), ``None`` for none. A code env grades each task
        with the grader it holds for that kind, or its family's grader for a kind it
        holds none for (:meth:`~forgegym.envs.code_env.CodeEnv.grader_for`; Refactor's
        ``kind`` names its refactoring), so one batch may hold tasks of several kinds."""
        kind = self.hidden.get("kind")
        return kind if isinstance(kind, str) else None


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

    def ids(self, difficulty: int | None = None) -> Sequence[str]:
        """Every task id the bank samples from (at ``difficulty``); :meth:`get` serves
        each of them (and may serve documented extra ids, e.g. a seed task)."""
        ...

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        """Draw one task using ``rng`` (and only ``rng``), optionally at a difficulty."""
        ...

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> Sequence[str]:
        """``n`` distinct task ids, deterministic in ``seed`` (for datasets, curricula and
        validation). Banks with fewer than ``n`` tasks return all they have."""
        ...


class TaskList:
    """A :class:`TaskBank` over tasks you built (any family), in the order given.

    The typed way to serve your own tasks to a family's environment::

        from forgegym.core.task import TaskList
        from forgegym.envs.bugfix.repo import repo_task

        bank = TaskList([repo_task("repo_a", ["tests/test_a.py::test_x"]),
                         repo_task("repo_b", ["tests/test_b.py::test_y"])])
        env = gym.make("Forge/Bugfix-v0", task_bank=bank)

    Args:
        tasks: the tasks (at least one; unique ids; all of one family).
        family: the family name; default: the tasks' ``family``.

    Raises:
        ValueError: ``tasks`` is empty, has duplicate ids or mixes families.
    """

    def __init__(self, tasks: Sequence[Task], family: str | None = None) -> None:
        items = list(tasks) if not isinstance(tasks, Task) else [tasks]
        if not items or not all(isinstance(t, Task) for t in items):
            raise ValueError(f"tasks: expected a non-empty list of Task, got {tasks!r}"[:300])
        families = {t.family for t in items} | ({family} if family else set())
        if len(families) != 1:
            raise ValueError(f"tasks: one family per bank, got {sorted(families)}")
        ids = [t.task_id for t in items]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"tasks: duplicate task ids {duplicates}")
        self.family = families.pop()
        self.difficulty_levels: tuple[int, ...] = tuple(sorted({t.difficulty for t in items}))
        self._tasks = {t.task_id: t for t in items}

    def __len__(self) -> int:
        return len(self._tasks)

    def get(self, task_id: str) -> Task:
        if not isinstance(task_id, str) or task_id not in self._tasks:
            raise UnknownTaskError(f"no task {task_id!r} in this TaskList")
        return self._tasks[task_id]

    def ids(self, difficulty: int | None = None) -> list[str]:
        """Every task id (at ``difficulty``), in the order given."""
        return [t for t, task in self._tasks.items() if difficulty in (None, task.difficulty)]

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        ids = self.ids(difficulty)
        if not ids:
            raise ValueError(f"difficulty must be one of {list(self.difficulty_levels)}")
        return self._tasks[ids[int(rng.integers(len(ids)))]]

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        ids = self.ids(difficulty)
        order = np.random.default_rng(seed).permutation(len(ids))
        return [ids[i] for i in order[: max(0, n)]]
