"""``Forge/Oversight-v0``: detect, locate, explain and correct corruptions in another
model's answer, with calibrated confidence; deterministic graders, no LLM judge.
See :class:`forgegym.envs.oversight.env.OversightEnv`.

Registers the family on import (import-light: everything heavy is a lazy reference).
"""

from __future__ import annotations

from forgegym.family import EnvSpec, Family, register_family

__all__ = ["FAMILY"]

FAMILY = register_family(
    Family(
        name="oversight",
        envs=(EnvSpec("Forge/Oversight-v0"),),
        env_class="forgegym.envs.oversight.env:OversightEnv",
        task_bank="forgegym.envs.oversight.bank:OversightBank",
        action_models="forgegym.envs.oversight.actions:ACTION_MODELS",
        grader="forgegym.envs.oversight.grader:OversightGrader",
        reference="forgegym.envs.oversight.policies:oracle",
        partial="forgegym.envs.oversight.policies:partial",
        hacks="forgegym.envs.oversight.policies:HACKS",
        baselines="forgegym.envs.oversight.policies:BASELINES",
        stats="forgegym.envs.oversight.bank:bank_stats",
        eval_stats="forgegym.envs.oversight.stats:stats_from_results",
        report="forgegym.envs.oversight.stats:bank_report",
        description="detect, explain and correct a corruption in another model's answer",
    )
)
