"""``verify_tasks`` arguments: chunks by offset, clear errors for bad ones."""

from __future__ import annotations

import pytest

from forgegym.policies.verify import verify_tasks


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"offset": -1}, "offset"), ({"offset": 1.5}, "offset"), ({"limit": 0}, "limit")],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        verify_tasks("Forge/Performance-v0", **kwargs)  # type: ignore[arg-type]
