"""The Refactor parent's caches (libcst trees, API surfaces, forwarding scans, compile
checks) give what computing afresh gives, hand out private copies, and are off on the
reference grading path (``bounded.uncached``)."""

from __future__ import annotations

from forgegym.envs.refactor import analysis
from forgegym.envs.refactor.analysis import api_surface, forwarding_tricks
from forgegym.envs.refactor.integrity import _defs
from forgegym.envs.refactor.static import compile_error as _compile_error
from forgegym.rewards import bounded

FILES = {
    "stats/__init__.py": "from .core import mean\nfrom .extra import *\n",
    "stats/core.py": "def mean(xs, *, weights=None):\n    return sum(xs) / len(xs)\n",
    "stats/extra.py": "def spread(xs, k='a'):\n    return max(xs) - min(xs)\n\n_private = 1\n",
}


def test_api_surfaces_are_cached_copies_equal_to_fresh_ones() -> None:
    first = api_surface(FILES, "stats")
    assert first is not None and set(first) == {"mean", "spread"}
    first["mean"] = analysis.ApiEntry("value")  # a private copy: the cache is unchanged
    again = api_surface(FILES, "stats")
    with bounded.uncached():
        fresh = api_surface(FILES, "stats")
    assert again == fresh and again is not None and again["mean"].kind == "function"
    assert again["spread"].signature == "(xs, k='a')"
    # Another file content is another key.
    changed = {**FILES, "stats/core.py": "def mean(xs):\n    return 0\n"}
    surface = api_surface(changed, "stats")
    assert surface is not None and surface["mean"].signature == "(xs)"
    assert api_surface(FILES, "missing") is None


def test_libcst_trees_are_shared_only_while_caching() -> None:
    source = FILES["stats/core.py"]
    tree = analysis._cst(source)
    assert tree is not None and analysis._cst(source) is tree
    with bounded.uncached():
        fresh = analysis._cst(source)
    assert fresh is not tree and fresh is not None and fresh.code == tree.code
    assert analysis._cst("def (:\n") is None and analysis._cst("def (:\n") is None


def test_forwarding_defs_and_compile_checks_repeat_their_first_answer() -> None:
    text = "from os.path import *\nexec('x = 1')\n"
    assert forwarding_tricks(text) == ["exec", "star import"]
    assert forwarding_tricks(text, allow_star=True) == ["exec"]
    assert forwarding_tricks(text) == ["exec", "star import"]
    defs = _defs(FILES)
    defs["mean"].append(("elsewhere.py", 1))  # private copies
    with bounded.uncached():
        fresh = _defs(FILES)
    assert _defs(FILES) == fresh and [p for p, _ in fresh["mean"]] == ["stats/core.py"]
    assert set(fresh) == {"mean", "spread"} and fresh["spread"][0][1] > 5
    for _ in range(2):
        assert _compile_error("x = 1\n", "a.py") is None
        error = _compile_error("return 1\n", "a.py")
        assert error is not None and "outside function" in error
