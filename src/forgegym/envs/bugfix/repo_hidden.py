"""The grading data of a repository-mode Bugfix task (``Task.hidden``) and its grading
kind: what the task builder (:mod:`forgegym.envs.bugfix.repo`) writes and the grader
(:mod:`forgegym.envs.bugfix.repo_grader`) reads."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from forgegym.core.task import Task

__all__ = [
    "DEFAULT_REPO_WEIGHTS",
    "FAMILY",
    "GRADING_KIND",
    "RepoHidden",
    "is_repo_task",
]

FAMILY = "bugfix"
#: The grading kind of a repository task (``Task.grading_kind``, from
#: :attr:`RepoHidden.kind`): a Bugfix env grades it with
#: :class:`~forgegym.envs.bugfix.repo_grader.RepoGrader`.
GRADING_KIND = "repo"

#: Default weights of a repository task (``weights`` overrides any subset). ``notes`` is 0:
#: without a known bug location, a note cannot be checked for grounding.
DEFAULT_REPO_WEIGHTS: dict[str, float] = {
    "hidden": 6.0,
    "visible": 1.0,
    "lint": 0.25,
    "diff": 0.5,
    "efficiency": 0.25,
    "notes": 0.0,
    "regression": 2.0,
    "noop": 1.0,
    # the share of the behaviour checks' discriminating calls now right (real-bank tasks
    # with checks; weight 0, left out, for a task graded by its tests alone)
    "behaviour": 3.0,
}


class RepoHidden(BaseModel):
    """The grading data of a repository task (``Task.hidden``, as a plain dict)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["repo"] = "repo"
    failing_tests: list[str] = Field(description="Visible tests that must go from fail to pass.")
    passing_tests: list[str] = Field(description="Visible tests passing at the start (p2p).")
    hidden_files: dict[str, str] = Field(
        default_factory=dict, description="Your hidden test files: path -> content."
    )
    hidden_ids: list[str] = Field(default_factory=list, description="Every hidden test id.")
    hidden_failing: list[str] = Field(
        default_factory=list, description="Hidden tests failing at the start (fail-to-pass)."
    )
    diff_budget: int = Field(default=20, ge=1, description="Lines a fix may change at full credit.")
    excluded: list[str] = Field(
        default_factory=list,
        description="Tests whose outcome differs between the sandbox and the host: never graded.",
    )
    test_imports: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Visible test file -> the repository modules it imports (transitively).",
    )
    time_limit_s: float = Field(default=20.0, gt=0, description="Wall limit of a test run.")
    behaviour: dict[str, Any] | None = Field(
        default=None,
        description="A real-bank task's behaviour checks "
        "(:class:`~forgegym.envs.bugfix.behaviour.BehaviourChecks`, parent-side only); "
        "None: graded by the tests alone.",
    )


def is_repo_task(task: Task) -> bool:
    """Whether ``task`` was built by :func:`~forgegym.envs.bugfix.repo.repo_task`."""
    return task.grading_kind == GRADING_KIND
