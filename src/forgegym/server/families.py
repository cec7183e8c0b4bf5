"""Per-family statistics for ``GET /{family}/stats``, from the registered families.

A family exposes statistics through its :class:`~forgegym.family.Family` ``stats``
hook: a callable taking the family's task bank (or nothing) and returning a pydantic
model or JSON-compatible data. Nothing here names a family.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["stats_hooks"]


def _call_hook(family: Any) -> Any:
    from forgegym.family import resolve

    hook = resolve(family.stats)
    try:
        params = [
            p
            for p in inspect.signature(hook).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    if params:
        return hook(_bank(family.name))
    return hook()


@functools.cache
def _bank_cached(name: str) -> Any:
    from forgegym.family import get_family

    return get_family(name).make_task_bank()


def _bank(name: str) -> Any:
    return _bank_cached(name)


def stats_hooks() -> dict[str, Callable[[], Any]]:
    """``{family name: zero-argument callable returning its statistics}`` for every
    registered family that has a statistics hook."""
    from forgegym.family import families

    return {
        family.name: functools.partial(_call_hook, family)
        for family in families()
        if family.stats is not None
    }
