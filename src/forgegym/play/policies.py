"""Old import path of :mod:`forgegym.policies` (issue 35 moved the baseline policies to
their own layer, below ``envs``); kept so that ``from forgegym.play.policies import
...`` keeps working. New code imports :mod:`forgegym.policies`."""

from __future__ import annotations

from forgegym.policies import NOOP_ACTION, Policy, available_policies, make, policy_names

__all__ = ["NOOP_ACTION", "Policy", "available_policies", "make", "policy_names"]
