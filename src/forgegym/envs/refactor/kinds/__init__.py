"""Task kinds. Each module builds :class:`~forgegym.envs.refactor.spec.RefactorSpec`
objects for one kind of refactoring; :func:`kinds` maps kind names to builders
``build(level) -> list[RefactorSpec]`` over the corpus or templates.

Every kind module also has ``drafts(level, module=None)``: the same specs, in the same
order, as ``(module, variant, make)`` triples whose ``make()`` builds the spec (or
``None``). Deciding which variants exist (seeded draws, de-duplication) is cheap; the
expensive part (reference code, visible tests, hidden inputs, analysis) runs only in
``make``, so :func:`spec_for_variant` builds one task without building its siblings.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator
from typing import Protocol

from forgegym.envs.refactor.spec import RefactorSpec

__all__ = ["Builder", "Draft", "kinds", "spec_for_variant", "specs_for_module"]

from forgegym.envs.refactor.kinds.common import Builder, Draft, built


class _KindModule(Protocol):
    def drafts(self, level: int, module: str | None = None) -> Iterator[Draft]: ...


@functools.cache
def kinds() -> dict[str, Builder]:
    """Kind name -> builder (imported on first use)."""
    from forgegym.envs.refactor.kinds import complexity, deadcode, extract, rename, split, state

    return {
        "split_package": split.build_all,
        "rename_alias": rename.build_all,
        "dead_code": deadcode.build_all,
        "extract_helper": extract.build_all,
        "reduce_complexity": complexity.build_all,
        "state_to_object": state.build_all,
    }


def _owner(kind: str) -> _KindModule:
    owner: _KindModule = importlib.import_module(kinds()[kind].__module__)  # type: ignore[assignment]
    return owner


@functools.cache
def specs_for_module(kind: str, level: int, module: str) -> tuple[RefactorSpec, ...]:
    """The specs of one kind, level and module."""
    return tuple(built(_owner(kind).drafts(level, module)))


def spec_for_variant(kind: str, level: int, module: str, variant: str) -> RefactorSpec | None:
    """The one spec of a kind, level, module and variant (``None``: the kind builds no
    such spec); its siblings are drafted, not built."""
    for _, name, make in _owner(kind).drafts(level, module):
        if name == variant:
            return make()
    return None
