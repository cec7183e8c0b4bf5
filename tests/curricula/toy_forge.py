"""A toy code family for curriculum/integration tests (not registered by the package).

A task asks the agent to make ``answer()`` in ``pkg/mod.py`` return a target number.
Grading is in-process string inspection (no code is executed), so these tests do not
depend on the sandbox runner. It is a real :class:`~forgegym.envs.code_env.CodeEnv`
subclass, so it follows the episode loop and info contract of the code families.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from forgegym.core.actions import EditAction, SubmitAction
from forgegym.core.task import Task, UnknownTaskError
from forgegym.envs.code_env import CodeEnv
from forgegym.rewards import RewardBreakdown, compose
from forgegym.sandbox.jobs import PytestResult, RunStatus
from forgegym.sandbox.workspace import Workspace

TOY_ENV_ID = "ForgeTest/Toy-v0"
SOURCE = "def answer():\n    return 0\n"
PER_LEVEL = 500


class ToyBank:
    """Tasks ``toy/d<level>/<index>``; target = 100 * (level + 1) + index."""

    family = "toy"
    difficulty_levels = (0, 1, 2)

    def get(self, task_id: str) -> Task:
        try:
            family, level_part, index_part = task_id.split("/")
            level, index = int(level_part.removeprefix("d")), int(index_part)
        except ValueError:
            raise UnknownTaskError(task_id) from None
        if family != "toy" or level not in self.difficulty_levels or not 0 <= index < PER_LEVEL:
            raise UnknownTaskError(task_id)
        target = 100 * (level + 1) + index
        return Task(
            task_id=task_id,
            family="toy",
            difficulty=level,
            title=f"Return {target}",
            description=f"Make `answer()` in pkg/mod.py return {target}.",
            files={"pkg/mod.py": SOURCE},
            editable_files=("pkg/mod.py",),
            hidden={"target": target},
            reference={"pkg/mod.py": f"def answer():\n    return {target}\n"},
        )

    def sample(self, rng: np.random.Generator, difficulty: int | None = None) -> Task:
        level = int(rng.choice(self.difficulty_levels)) if difficulty is None else difficulty
        return self.get(f"toy/d{level}/{int(rng.integers(PER_LEVEL))}")

    def ids(self, difficulty: int | None = None) -> list[str]:
        levels = self.difficulty_levels if difficulty is None else (difficulty,)
        return [f"toy/d{lv}/{i}" for lv in levels for i in range(PER_LEVEL)]

    def task_ids(self, n: int, *, seed: int = 0, difficulty: int | None = None) -> list[str]:
        rng = np.random.default_rng(seed)
        levels = self.difficulty_levels if difficulty is None else (difficulty,)
        universe = [f"toy/d{lv}/{i}" for lv in levels for i in range(PER_LEVEL)]
        picks = rng.choice(len(universe), size=min(n, len(universe)), replace=False)
        return [universe[int(i)] for i in picks]


def _score(task: Task, files: dict[str, str]) -> RewardBreakdown:
    solved = f"return {task.hidden['target']}" in files.get("pkg/mod.py", "")
    return compose({"hidden": 1.0 if solved else 0.0}, {"hidden": 1.0})


class ToyEnv(CodeEnv):
    """The toy family; grading inspects the edited file instead of running tests."""

    family = "toy"
    system_prompt = "You fix tiny Python modules."
    #: Its own grade_completions, no batch path across tasks (CodeEnv's would bypass it).
    batch_grading = False

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("shaping_weight", 0.0)
        super().__init__(task_bank=ToyBank(), grader=None, **kwargs)  # type: ignore[arg-type]

    def run_visible_tests(self, tests: Sequence[str] | None = None) -> PytestResult:
        return PytestResult(status=RunStatus.COMPLETED, records=[], expected_ids=[])

    def _grade(self) -> RewardBreakdown:
        return _score(self.task, dict(self.workspace.current))

    def grade_completions(
        self, task_id: str, completions: Sequence[str]
    ) -> list[tuple[float, RewardBreakdown]]:
        task = self.task_bank.get(task_id)
        out: list[tuple[float, RewardBreakdown]] = []
        for completion in completions:
            parsed = self.action_set.parse(completion)
            files = dict(task.files)
            penalty = 0.0 if parsed.ok else self.format_penalty
            if parsed.ok:
                with Workspace(task.files, task.editable_files, prefix="fg-toy-") as scratch:
                    for action in parsed.actions:
                        if isinstance(action, EditAction):
                            scratch.apply_edits(action.edits)
                        elif isinstance(action, SubmitAction):
                            break
                    files = dict(scratch.current)
            breakdown = _score(task, files)
            out.append((breakdown.total + penalty, breakdown))
        return out


def solve_action(task_id: str) -> str:
    """The reference action text for a toy task."""
    task = ToyBank().get(task_id)
    edits = [{"path": "pkg/mod.py", "content": task.reference["pkg/mod.py"]}]
    return json.dumps([{"action": "edit", "edits": edits}, {"action": "submit"}])


def register_toy() -> None:
    if TOY_ENV_ID not in gym.registry:
        gym.register(id=TOY_ENV_ID, entry_point=f"{__name__}:ToyEnv", disable_env_checker=True)


register_toy()  # so `gym.make("toy_forge:ForgeTest/Toy-v0")` works
