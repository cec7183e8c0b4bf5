"""Per-family statistics for ``GET /{family}/stats``, from the registered families.

A family's :class:`~forgegym.family.Family` ``report`` hook (``() -> pydantic model``)
is served when it has one, else its ``stats`` hook (``(bank) -> {label: count}``).
Both describe a fixed task bank, so each is computed once per server process. Nothing
here names a family.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["stats_hooks"]

_CACHE: dict[str, Any] = {}
_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def _compute(family: Any) -> Any:
    from forgegym.family import resolve

    if family.report is not None:
        return resolve(family.report)()
    return family.stats_function()(family.make_task_bank())


def _cached(family: Any) -> Any:
    with _GUARD:
        lock = _LOCKS.setdefault(family.name, threading.Lock())
    with lock:  # one computation per family, however many requests arrive at once
        key = f"{family.name}:{id(family)}"
        if key not in _CACHE:
            _CACHE[key] = _compute(family)
        return _CACHE[key]


def stats_hooks() -> dict[str, Callable[[], Any]]:
    """``{family name: zero-argument callable returning its statistics}`` for every
    registered family that has a ``report`` or ``stats`` hook."""
    from forgegym.family import families

    return {
        family.name: functools.partial(_cached, family)
        for family in families()
        if family.report is not None or family.stats_function() is not None
    }
