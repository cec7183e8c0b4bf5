"""Task kinds. Each module builds :class:`~forgegym.envs.refactor.spec.RefactorSpec`
objects for one kind of refactoring; :func:`kinds` maps kind names to builders
``build(level, variant_seed) -> list[RefactorSpec]`` over the corpus or templates."""

from __future__ import annotations

import functools
from collections.abc import Callable

from forgegym.envs.refactor.spec import RefactorSpec

__all__ = ["Builder", "kinds", "specs_for_module"]

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


@functools.cache
def specs_for_module(kind: str, level: int, module: str) -> tuple[RefactorSpec, ...]:
    """The specs of one kind, level and module: corpus kinds build only that module
    (``build_for``), template kinds filter their (cheap) full list."""
    import importlib

    builder = kinds()[kind]
    owner = importlib.import_module(builder.__module__)
    build_for = getattr(owner, "build_for", None)
    if build_for is not None:
        from forgegym.envs.refactor.corpus import load_corpus

        return tuple(build_for(module, level)) if module in load_corpus() else ()
    return tuple(s for s in builder(level) if s.module == module)
