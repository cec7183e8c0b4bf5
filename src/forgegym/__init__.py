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

import importlib
import pkgutil
from typing import Any

import forgegym.envs
from forgegym.family import EnvSpec, Family, families, get_family, register_family
from forgegym.family.registration import env_ids, env_specs, register_envs

__version__ = "0.1.0"
__all__ = [
    "ENV_SPECS",
    "EnvSpec",
    "Family",
    "__version__",
    "discover_families",
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


def discover_families() -> None:
    """Import every family package under :mod:`forgegym.envs`; each registers itself.

    Discovery is the package root's job, not the registry's: the root sits above every
    layer (it is what ``import forgegym`` and ``gym.make("forgegym:...")`` run), as
    ``gymnasium/__init__.py`` imports ``gymnasium.envs`` whose ``__init__`` registers
    the environments, while its registry never imports an environment. A sixth family
    is one folder: nothing here names one. Safe to call twice (a package imports once).
    """
    for info in sorted(pkgutil.iter_modules(forgegym.envs.__path__), key=lambda i: i.name):
        if info.ispkg:
            importlib.import_module(f"{forgegym.envs.__name__}.{info.name}")


discover_families()
register_envs()
