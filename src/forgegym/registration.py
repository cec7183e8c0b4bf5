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


ENV_SPECS: tuple[EnvSpecEntry, ...] = ()


def env_ids() -> list[str]:
    return [spec.env_id for spec in ENV_SPECS]


def register_envs() -> None:
    """Register every id in :data:`ENV_SPECS` with Gymnasium (safe to call twice)."""
    for spec in ENV_SPECS:
        if spec.env_id in gym.registry:
            continue
        gym.register(
            id=spec.env_id,
            entry_point=spec.entry_point,
            kwargs=dict(spec.kwargs),
            max_episode_steps=spec.max_episode_steps,
            # Our episodes end on their own; Gymnasium's checker-wrapper would
            # re-validate every text observation we already guarantee.
            disable_env_checker=True,
        )
