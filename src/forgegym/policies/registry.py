"""Scripted actions per family: the reference solution and the known hacks.

These are fields of each family's :class:`~forgegym.family.Family` (``reference``,
``partial``, ``hacks``); this module is the lookup by family name that baseline
policies and task validation use. ``register_hack`` / ``register_reference`` remain
for code written before families registered them (they add to the family's own).
"""

from __future__ import annotations

from collections.abc import Callable

from forgegym.core.task import Task
from forgegym.family import (
    _add_legacy_hack,
    _add_legacy_reference,
    default_reference_action,
    registered_family,
)

__all__ = [
    "ActionFn",
    "baselines_for",
    "default_reference_action",
    "hacks_for",
    "partial_action_for",
    "reference_action_for",
    "register_hack",
    "register_reference",
]

ActionFn = Callable[[Task], str]


def register_reference(family: str, fn: ActionFn) -> None:
    """Override the reference action of ``family`` (prefer ``Family(reference=...)``)."""
    _add_legacy_reference(family, fn)


def reference_action_for(family: str) -> ActionFn:
    registered = registered_family(family)
    if registered is None:
        from forgegym.family import _legacy_reference

        return _legacy_reference(family) or default_reference_action  # type: ignore[return-value]
    return registered.reference_action()  # type: ignore[return-value]


def partial_action_for(family: str) -> Callable[[Task], str | None] | None:
    registered = registered_family(family)
    return registered.partial_action() if registered is not None else None


def register_hack(family: str, name: str, fn: ActionFn) -> None:
    """Add a hack to ``family`` (prefer listing it in ``Family(hacks=...)``)."""
    _add_legacy_hack(family, name, fn)


def hacks_for(family: str) -> dict[str, ActionFn]:
    registered = registered_family(family)
    if registered is None:
        from forgegym.family import _EXTRA_HACKS, _LOCK

        with _LOCK:
            return dict(_EXTRA_HACKS.get(family, {}))  # type: ignore[arg-type]
    return registered.hack_actions()  # type: ignore[return-value]


def baselines_for(family: str) -> dict[str, ActionFn]:
    """The family's baseline policies (``Family.baselines``), by name."""
    registered = registered_family(family)
    return registered.baseline_actions() if registered is not None else {}  # type: ignore[return-value]
