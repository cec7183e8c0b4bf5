"""Task kinds. Each module builds :class:`~forgegym.envs.refactor.spec.RefactorSpec`
objects for one kind of refactoring; :func:`kinds` maps kind names to builders
``build(level, variant_seed) -> list[RefactorSpec]`` over the corpus or templates."""

from __future__ import annotations

import functools
from collections.abc import Callable

from forgegym.envs.refactor.spec import RefactorSpec

__all__ = ["Builder", "kinds"]

Builder = Callable[[int], list[RefactorSpec]]


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

