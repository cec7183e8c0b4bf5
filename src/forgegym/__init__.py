"""forgegym: Gymnasium environments for training code LLMs on real software work.

Importing the package registers every environment id with Gymnasium::

    import gymnasium as gym
    import forgegym  # noqa: F401

    env = gym.make("Forge/Bugfix-v0")

``gym.make("forgegym:Forge/Bugfix-v0")`` imports the package for you.
"""

from __future__ import annotations

from forgegym.registration import ENV_SPECS, env_ids, register_envs

__version__ = "0.1.0"
__all__ = ["ENV_SPECS", "__version__", "env_ids", "register_envs"]

register_envs()
