"""forgegym: Gymnasium environments for training code LLMs on real software work.

Importing the package discovers the task families (:mod:`forgegym.family`) and
registers every environment id with Gymnasium::

    import gymnasium as gym
    import forgegym  # noqa: F401

    env = gym.make("Forge/Bugfix-v0")

``gym.make("forgegym:Forge/Bugfix-v0")`` imports the package for you. A new family
registers with :func:`register_family` (see :mod:`forgegym.family`).
"""

from __future__ import annotations

from typing import Any

from forgegym.family import EnvSpec, Family, families, get_family, register_family
from forgegym.family.registration import env_ids, env_specs, register_envs

__version__ = "0.1.0"
__all__ = [
    "ENV_SPECS",
    "EnvSpec",
    "Family",
    "__version__",
    "env_ids",
    "env_specs",
    "families",
    "get_family",
    "register_envs",
    "register_family",
]


def __getattr__(name: str) -> Any:
    if name == "ENV_SPECS":  # computed: families may register after import
        return env_specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


register_envs()
