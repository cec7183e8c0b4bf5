"""``Forge/FlakyRepair-v0``: flaky-test repair with reproducible chaos.
See :class:`forgegym.envs.flaky.env.FlakyRepairEnv`.

Registers the family on import. Kept import-light on purpose (every heavy part is a
lazy ``"module:attr"`` reference): the sandbox child imports
``forgegym.envs.flaky.chaos`` as a trusted setup hook, which imports this package.
"""

from __future__ import annotations

from forgegym.family import Family, register_family

__all__ = ["FAMILY"]

# Everything by convention (see forgegym.family): env:FlakyRepairEnv,
# bank:FlakyRepairTaskBank, grader:FlakyRepairGrader, actions:ACTIONS,
# scan:scan_submission, policies:reference_action/partial_action, hacks:HACKS,
# bench:run_bench, bank:bank_stats.
FAMILY = register_family(
    Family.in_package(
        __name__,
        "Forge/FlakyRepair-v0",
        description="make a flaky test pass repeatably without weakening it",
    )
)
