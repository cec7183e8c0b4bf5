"""The registry of forgegym environment ids.

``ENV_SPECS`` lists exactly the environments that work; ``register_envs`` registers
them with Gymnasium (idempotently). Families add one line here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

__all__ = ["ENV_SPECS", "EnvSpecEntry", "register_envs", "env_ids"]


@dataclass(frozen=True)
class EnvSpecEntry:
    env_id: str
    entry_point: str
    family: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    max_episode_steps: int | None = None


ENV_SPECS: tuple[EnvSpecEntry, ...] = (
    EnvSpecEntry("Forge/Bugfix-v0", "forgegym.envs.bugfix.env:BugfixEnv", "bugfix"),
    EnvSpecEntry("Forge/FlakyRepair-v0", "forgegym.envs.flaky.env:FlakyRepairEnv", "flaky"),
)


def env_ids() -> list[str]:
    return [spec.env_id for spec in ENV_SPECS]


def register_envs() -> None:
    """Register every id in :data:`ENV_SPECS` with Gymnasium (safe to call twice).

    Also installs forgegym's shared-memory handlers for text spaces, so that
    ``gymnasium.make_vec(id, vectorization_mode="async")`` (default
    ``shared_memory=True``) returns the real observations (see :mod:`forgegym.vector`).
    Doing it here means every process that can build one of our envs has them: the
    package import (``gym.make("forgegym:Forge/...")`` included) calls this.
    """
    import forgegym.vector  # noqa: F401  (registers the handlers on import)

    for spec in ENV_SPECS:
        if spec.env_id in gym.registry:
            continue
        gym.register(
            id=spec.env_id,
            entry_point=spec.entry_point,
            kwargs=dict(spec.kwargs),
            max_episode_steps=spec.max_episode_steps,
        )
