"""Scripted actions per family: the reference solution and the known hacks.

These are fields of each family's :class:`~forgegym.family.Family` (``reference``,
``partial``, ``hacks``); this module is the lookup by family name that baseline
policies and task validation use. A family adds hacks or references by naming them
in its ``Family`` registration, nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable

from forgegym.core.task import Task
from forgegym.family import default_reference_action, registered_family

__all__ = [
    "ActionFn",
    "baselines_for",
    "default_reference_action",
    "hacks_for",
    "partial_action_for",
    "reference_action_for",
]

ActionFn = Callable[[Task], str]


def reference_action_for(family: str) -> ActionFn:
    registered = registered_family(family)
    if registered is None:
        return default_reference_action
    return registered.reference_action()  # type: ignore[return-value]


def partial_action_for(family: str) -> Callable[[Task], str | None] | None:
    registered = registered_family(family)
    return registered.partial_action() if registered is not None else None


def hacks_for(family: str) -> dict[str, ActionFn]:
    registered = registered_family(family)
    if registered is None:
        return {}
    return registered.hack_actions()  # type: ignore[return-value]


def baselines_for(family: str) -> dict[str, ActionFn]:
    """The family's baseline policies (``Family.baselines``), by name."""
    registered = registered_family(family)
    return registered.baseline_actions() if registered is not None else {}  # type: ignore[return-value]
