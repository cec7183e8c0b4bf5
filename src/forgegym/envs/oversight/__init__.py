"""``Forge/Oversight-v0``: detect, locate, explain and correct corruptions in another
model's answer, with calibrated confidence; deterministic graders, no LLM judge.
See :class:`forgegym.envs.oversight.env.OversightEnv`.

Registers the family on import (import-light: everything heavy is a lazy reference).
"""

from __future__ import annotations

from forgegym.family import Family, register_family

__all__ = ["FAMILY"]

# By convention (see forgegym.family): env:OversightEnv, bank:OversightTaskBank,
# grader:OversightGrader, actions:ACTIONS, policies:reference_action/partial_action,
# hacks:HACKS, bank:bank_stats. Named here: what the convention does not say.
FAMILY = register_family(
    Family.in_package(
        __name__,
        "Forge/Oversight-v0",
        baselines=".policies:BASELINES",
        eval_stats=".stats:stats_from_results",
        report=".stats:bank_report",
        description="detect, explain and correct a corruption in another model's answer",
    )
)
