"""A trainer callback that warns when a GRPO step had no learning signal.

GRPO learns from differences between the rewards of one prompt's completions. When
every completion of every group scores the same (a model that never writes a valid
action, completions clipped before the action ends, all-solved groups), the advantages
are zero and so is the gradient: the step trains on nothing, and without a warning a
run of such steps looks like a run that merely learns slowly.

Usage::

    from forgegym.integrations.nosignal import NoSignalCallback

    trainer = GRPOTrainer(..., callbacks=[NoSignalCallback()])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

from transformers import TrainerCallback

__all__ = ["NoSignalCallback", "NoSignalWarning", "no_signal_reasons"]

#: What to try, in the order most likely to help.
ADVICE = (
    "warm-start the model on reference trajectories (examples/train_grpo.py --warm-start "
    "sft), allow longer completions (max_completion_length) so actions are not clipped, "
    "sample more diversely (num_generations, temperature), or train on tasks the model "
    "solves sometimes but not always"
)


class NoSignalWarning(UserWarning):
    """A logged training step had zero reward variance or a zero gradient norm."""


def _is_zero(value: Any) -> bool:
    """A logged number that is exactly zero (NaN and missing values are not)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return not math.isnan(number) and number == 0.0


def no_signal_reasons(logs: Mapping[str, Any]) -> list[str]:
    """Why a step's logs show no learning signal (empty when they show one).

    Reads TRL's ``GRPOTrainer`` keys: ``reward_std`` (over the whole batch),
    ``frac_reward_zero_std`` (the fraction of prompt groups whose completions all
    scored the same; 1.0 means no group had an advantage even when the batch's std is
    not zero) and the Trainer's ``grad_norm``. Logs without these keys (an SFT step,
    the final summary) give no reasons.
    """
    reasons = []
    if "reward_std" in logs and _is_zero(logs["reward_std"]):
        reasons.append("reward_std 0 (every completion scored the same)")
    elif "frac_reward_zero_std" in logs:
        try:
            all_flat = float(logs["frac_reward_zero_std"]) >= 1.0
        except (TypeError, ValueError):
            all_flat = False
        if all_flat:
            reasons.append("frac_reward_zero_std 1 (no group's completions scored differently)")
    if "grad_norm" in logs and _is_zero(logs["grad_norm"]):
        reasons.append("grad_norm 0")
    return reasons


class NoSignalCallback(TrainerCallback):  # type: ignore[misc]
    """Warns (:class:`NoSignalWarning`) once per logged step that had no signal.

    A step is warned about at most once however often it is logged; the message names
    the step, the zero values and what to do about them.
    """

    def __init__(self) -> None:
        self.warned_steps: list[int] = []

    def on_log(
        self,
        args: Any,
        state: Any,
        control: Any,
        logs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Transformers calls this with each dict the trainer logs."""
        if not logs:
            return
        reasons = no_signal_reasons(logs)
        step = int(getattr(state, "global_step", 0))
        if not reasons or step in self.warned_steps:
            return
        self.warned_steps.append(step)
        warnings.warn(
            f"GRPO step {step} had no learning signal: {', '.join(reasons)}; this step "
            f"trained on nothing. To get one: {ADVICE}.",
            NoSignalWarning,
            stacklevel=2,
        )
