"""Isolation probe and the strict serializer (pure functions, no runner)."""

from __future__ import annotations

import pytest

from forgegym.sandbox.isolation import isolation_report
from forgegym.sandbox.protocol import StrictValueError, strict_plain


def test_isolation_report_shape() -> None:
    rows = isolation_report()
    names = {name for name, _, _ in rows}
    assert {"rlimits", "network_namespace", "pid_namespace", "landlock"} <= names
    for name, active, detail in rows:
        assert isinstance(name, str) and isinstance(active, bool) and detail


def test_strict_plain_accepts_exact_builtins() -> None:
    value = {"a": [1, 2.5, None, True, "s", (3, 4)], "b": {}}
    assert strict_plain(value) == {"a": [1, 2.5, None, True, "s", [3, 4]], "b": {}}


class _Eq:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class _Int(int):
    pass


@pytest.mark.parametrize("bad", [_Eq(), _Int(1), [_Int(1)], {1: 2}, {"k": {"s"}}, b"x"])
def test_strict_plain_rejects_everything_else(bad: object) -> None:
    with pytest.raises(StrictValueError):
        strict_plain(bad)
