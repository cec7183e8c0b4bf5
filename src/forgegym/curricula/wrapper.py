"""``PassAtKCurriculum``: a Gymnasium wrapper that lets the scheduler pick every task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

from forgegym.core.task import CANARY_PREFIX
from forgegym.curricula.scheduler import CurriculumConfig, CurriculumScheduler

__all__ = ["PassAtKCurriculum"]


class PassAtKCurriculum(gym.Wrapper):
    """Choose the task of each episode with a :class:`CurriculumScheduler`.

    On ``reset`` the wrapper asks the scheduler for a task and passes
    ``options={"task_id": ...}`` to the inner environment (an explicit ``task_id`` or
    ``difficulty`` in the caller's options wins, and its outcome is still recorded).
    When an episode ends (terminated or truncated) and ``info`` holds ``success``,
    the outcome is recorded. Works on every forgegym family: it only needs the inner
    environment's ``task_bank`` and the info contract.

    Args:
        env: a forgegym environment (possibly wrapped).
        scheduler: an existing scheduler (e.g. shared with a trainer); default: a new
            one over ``env.unwrapped.task_bank`` with ``config``.
        config: scheduler settings when ``scheduler`` is not given.
    """

    def __init__(
        self,
        env: gym.Env,
        scheduler: CurriculumScheduler | None = None,
        config: CurriculumConfig | dict[str, Any] | None = None,
    ) -> None:
        super().__init__(env)
        if scheduler is None:
            bank = getattr(env.unwrapped, "task_bank", None)
            if bank is None:
                raise ValueError("env: PassAtKCurriculum needs an environment with a `task_bank`")
            scheduler = CurriculumScheduler(bank, config)
        elif config is not None:
            raise ValueError("config: give either a scheduler or a config, not both")
        self.scheduler = scheduler
        self._task_id: str | None = None
        self._recorded = True
        self.episodes = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        options = dict(options or {})
        if "task_id" not in options and "difficulty" not in options:
            options["task_id"] = self.scheduler.next_task()
        observation, info = self.env.reset(seed=seed, options=options)
        # The id asked for: a canary is served under its base task's id (so a policy
        # cannot tell), and its outcome must not count as the base task's.
        self._task_id = options.get("task_id") or info.get("task_id")
        self._recorded = False
        info["curriculum"] = {"tier": self._tier(), **self.scheduler.tier_sizes()}
        return observation, info

    def _tier(self) -> str | None:
        if self._task_id is None or self._task_id not in self.scheduler:
            return None
        return self.scheduler.tier(self._task_id)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if (terminated or truncated) and not self._recorded and self._task_id is not None:
            # Canaries are not the curriculum's (no honest solution solves one).
            if "success" in info and not self._task_id.startswith(CANARY_PREFIX):
                self.scheduler.record(self._task_id, bool(info["success"]))
                self.episodes += 1
                info["curriculum"] = {"tier": self._tier(), **self.scheduler.tier_sizes()}
            # One record per episode even if the caller keeps stepping a finished env.
            self._recorded = True
        return observation, float(reward), terminated, truncated, info

    @property
    def history(self) -> list[dict[str, Any]]:
        """Per-rollout records: episode, task_id, success, difficulty and tier sizes."""
        return self.scheduler.history

    def save(self, path: str | Path) -> Path:
        """Save the scheduler's state (for ``forgegym plot curriculum``)."""
        return self.scheduler.save(path)
