"""Forge/FlakyRepair-v0: flaky-test repair with reproducible chaos.

Registers the family on import. Kept import-light on purpose (every heavy part is a
lazy ``"module:attr"`` reference): the sandbox child imports
``forgegym.envs.flaky.chaos`` as a trusted setup hook, which imports this package.
"""

from __future__ import annotations

from forgegym.family import Family, register_family

__all__ = ["FAMILY"]

# By convention (see forgegym.family): env:FlakyRepairEnv, solved, scanners, reference,
# partial, hacks, bench. Named here: what lives elsewhere than the convention says.
FAMILY = register_family(
    Family.in_package(
        __name__,
        "Forge/FlakyRepair-v0",
        task_bank=".generator:FlakyTaskBank",
        action_models=".actions:FLAKY_ACTIONS",
        stats=".generator:bank_stats",
        description="make a flaky test pass repeatably without weakening it",
    )
)
