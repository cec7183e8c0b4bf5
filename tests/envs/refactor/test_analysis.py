"""Static analysis: the libcst API surface, signatures, complexity, clones, forwarding."""

from __future__ import annotations

import ast

from forgegym.envs.refactor.analysis import (
    api_surface,
    ast_size,
    clone_counts,
    complexity,
    forwarding_tricks,
    function_defs,
)

PACKAGE = {
    "stats/__init__.py": "from .central import mean, median\nfrom stats.spread import *\n",
    "stats/central.py": "def mean(values):\n    return 1\n\n\ndef median(values, *, key='x'):\n    return 2\n",
    "stats/spread.py": "import math\n\n\ndef std_dev(values, sample=False):\n    return 0\n\n\ndef _hidden():\n    pass\n",
}


def test_api_surface_follows_relative_absolute_and_star_reexports() -> None:
    surface = api_surface(PACKAGE, "stats")
    assert surface is not None
    assert surface["mean"].kind == "function" and surface["mean"].signature == "(values)"
    # Defaults are compared in canonical form: quotes do not matter.
    assert surface["median"].signature == "(values, *, key='x')"
    assert surface["std_dev"].signature == "(values, sample=False)"
    assert "_hidden" not in surface
    assert api_surface(PACKAGE, "missing") is None


def test_a_package_shadows_a_same_named_module() -> None:
    files = {**PACKAGE, "stats.py": "def percentile(values, q):\n    return 0\n"}
    surface = api_surface(files, "stats")
    assert surface is not None and "percentile" not in surface


def test_forwarding_tricks_are_found() -> None:
    assert "exec" in forwarding_tricks("exec(open('x.py').read())\n")
    assert "module __getattr__" in forwarding_tricks("def __getattr__(name):\n    return 1\n")
    assert "star import" in forwarding_tricks("from os.path import *\n")
    assert forwarding_tricks("from os.path import *\n", allow_star=True) == []
    assert any("importlib" in t for t in forwarding_tricks("import importlib.util\n"))
    assert ".modules" in forwarding_tricks("import sys\nsys.modules['a'] = 1\n")
    assert forwarding_tricks("def f(x):\n    return x + 1\n") == []
    assert forwarding_tricks("def f(:\n") == ["unparseable"]


def test_complexity_and_sizes() -> None:
    source = (
        "def f(x):\n"
        "    if x > 1 and x < 5:\n"
        "        return 1\n"
        "    for i in range(x):\n"
        "        if i:\n"
        "            x += 1\n"
        "    return [y for y in range(x) if y]\n"
    )
    func = function_defs(ast.parse(source))["f"]
    # 1 + if + bool operand + for + if + comprehension + its filter
    assert complexity(func) == 7
    smaller = function_defs(ast.parse("def f(x):\n    '''doc'''\n    return 1\n"))["f"]
    assert 0 < ast_size(smaller) < ast_size(func)


def test_clone_counts_find_a_block_repeated_across_functions() -> None:
    block = "    x = x.strip()\n    x = x.lower()\n"
    source = f"def a(x):\n{block}    return x\n\n\ndef b(x):\n{block}    return len(x)\n"
    counts = clone_counts(ast.parse(source), 2)
    assert max(counts.values()) == 2
