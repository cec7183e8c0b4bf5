"""The parse cache of the bounded parser: same results as parsing afresh, shared
read-only trees, ``Unverifiable`` every time, and off under ``uncached``."""

from __future__ import annotations

import ast

import pytest

from forgegym.rewards import bounded
from forgegym.rewards.antihack import ModuleIndex


def test_cached_parses_equal_fresh_ones_and_errors_repeat() -> None:
    source = "def f(x):\n    return x + 1\n"
    first = bounded.parse(source)
    assert first is not None and bounded.parse(source) is first  # shared, read-only
    with bounded.uncached():
        fresh = bounded.parse(source)
    assert fresh is not first and ast.dump(fresh) == ast.dump(first)  # type: ignore[arg-type]
    assert bounded.parse("def (:\n") is None and bounded.parse("def (:\n") is None
    deep = "x = " + "[" * 170 + "1" + "]" * 170 + "\n"
    for _ in range(2):
        with pytest.raises(bounded.Unverifiable):
            bounded.parse(deep)


def test_module_indexes_are_shared_only_while_caching() -> None:
    source = "import os as o\n\ndef g():\n    o.sep\n"
    index = ModuleIndex.parse(source)
    assert index is not None and ModuleIndex.parse(source) is index
    assert index.aliases == {"o": "os"}
    with bounded.uncached():
        assert ModuleIndex.parse(source) is not index


def test_memoised_results_are_private_copies() -> None:
    calls: list[str] = []

    @bounded.memoised
    def words(text: str) -> list[str]:
        calls.append(text)
        return text.split()

    a = words("a b")
    a.append("mutated")
    assert words("a b") == ["a", "b"] and calls == ["a b"]
    with bounded.uncached():
        words("a b")
    assert calls == ["a b", "a b"]


def test_a_shared_pristine_index_is_scanned_once_with_the_same_findings() -> None:
    from forgegym.rewards.antihack import scan_source
    from forgegym.rewards.antihack.index import per_index

    calls: list[int] = []

    @per_index
    def events(index: ModuleIndex, names: set[str]) -> list[str]:
        calls.append(id(index))
        return sorted(names)

    index = ModuleIndex.parse("x = 1\n")
    assert index is not None
    first = events(index, {"b", "a"})
    first.append("mutated")  # a private copy
    assert events(index, {"a", "b"}) == ["a", "b"] and len(calls) == 1
    assert events(index, {"c"}) == ["c"] and len(calls) == 2  # other arguments
    # A pristine module compared with several patched files: the findings are those of
    # fresh, unshared indexes.
    pristine = "import sys\n\ndef f():\n    sys.exit(1)\n"
    patched = ["import sys\n\ndef g():\n    sys.exit(2)\n", "def f():\n    return 1\n"]
    cached = [scan_source(p, f"m{i}.py", pristine) for i, p in enumerate(patched)]
    with bounded.uncached():
        fresh = [scan_source(p, f"m{i}.py", pristine) for i, p in enumerate(patched)]
    assert cached == fresh and [f.kind for f in cached[0]] == ["exit_call"] and not cached[1]
