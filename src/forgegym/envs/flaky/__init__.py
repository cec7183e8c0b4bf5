"""Forge/FlakyRepair-v0: flaky-test repair with reproducible chaos.

Registers the family on import. Kept import-light on purpose (every heavy part is a
lazy ``"module:attr"`` reference): the sandbox child imports
``forgegym.envs.flaky.chaos`` as a trusted setup hook, which imports this package.
"""

from __future__ import annotations

from forgegym.family import EnvSpec, Family, register_family

__all__ = ["FAMILY"]

FAMILY = register_family(
    Family(
        name="flaky",
        package=__name__,  # solved, scanners, reference, partial, hacks, bench: by convention
        envs=(EnvSpec("Forge/FlakyRepair-v0"),),
        env_class="forgegym.envs.flaky.env:FlakyRepairEnv",
        task_bank="forgegym.envs.flaky.generator:FlakyTaskBank",
        action_models="forgegym.envs.flaky.actions:FLAKY_ACTIONS",
        stats="forgegym.envs.flaky.generator:bank_stats",
        description="make a flaky test pass repeatably without weakening it",
    )
)
