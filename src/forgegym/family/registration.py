"""Gymnasium registration of every registered family's ids.

The ids come from the :class:`~forgegym.family.Family` objects the family packages
register (see :mod:`forgegym.family`); nothing here names a family.
:func:`register_envs` (run by ``import forgegym``) discovers the families and
registers their ids with Gymnasium, idempotently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["EnvSpecEntry", "env_ids", "env_specs", "register_envs"]


@dataclass(frozen=True)
class EnvSpecEntry:
    """One registered id, flattened (kept for callers of the old ``ENV_SPECS``)."""

    env_id: str
    entry_point: Any
    family: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    max_episode_steps: int | None = None


def env_specs() -> tuple[EnvSpecEntry, ...]:
    """Every registered id with its family, entry point and kwargs."""
    from forgegym.family.registry import iter_env_specs

    return tuple(
        EnvSpecEntry(
            env_id=spec.env_id,
            entry_point=family.env_class,
            family=family.name,
            kwargs=dict(spec.kwargs),
            max_episode_steps=spec.max_episode_steps,
        )
        for family, spec in iter_env_specs()
    )


#: The Gymnasium client of ``forgegym serve`` (see :mod:`forgegym.server.remote`).
REMOTE_ENV_ID = "Forge/Remote-v0"


def env_ids() -> list[str]:
    """Every registered forgegym id, families in registration order."""
    return [spec.env_id for spec in env_specs()]


def __getattr__(name: str) -> Any:
    if name == "ENV_SPECS":  # computed: families may register after import
        return env_specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register_envs() -> None:
    """Discover the families and register their ids with Gymnasium (safe to call twice).

    Also installs forgegym's shared-memory handlers for text spaces, so that
    ``gymnasium.make_vec(id, vectorization_mode="async")`` (default
    ``shared_memory=True``) returns the real observations (see :mod:`forgegym.core.spaces`).
    Doing it here means every process that can build one of our envs has them: the
    package import (``gym.make("forgegym:Forge/...")`` included) calls this.
    """
    import forgegym.core.spaces  # noqa: F401  (registers the handlers on import)
    from forgegym.family.registry import activate_gymnasium, load_families

    load_families()
    activate_gymnasium()
    import gymnasium as gym

    if REMOTE_ENV_ID not in gym.registry:  # a client, not a family: in no env list
        gym.register(id=REMOTE_ENV_ID, entry_point="forgegym.server.remote:RemoteEnv")
