"""Structure requirements (:mod:`forgegym.envs.refactor.structure`)."""

from __future__ import annotations

from forgegym.envs.refactor.analysis import ast_size, function_defs, parse
from forgegym.envs.refactor.structure import structure_score

LOOP = (
    "def first(items):\n    for x in items:\n        if x:\n            return x\n    return None\n"
)
SHORT = "def first(items):\n    return next(filter(None, items), None)\n"


def test_function_size_asks_for_a_smaller_function() -> None:
    tree = parse(LOOP)
    assert tree is not None
    size = ast_size(function_defs(tree)["first"])
    req = [{"req": "function_size", "function": "first", "bound": size - 1}]
    assert structure_score({"m.py": LOOP}, req) == (
        0.0,
        [f"function_size(function=first, bound={size - 1})"],
    )
    assert structure_score({"m.py": SHORT}, req) == (1.0, [])
    # A missing function meets nothing.
    assert structure_score({"m.py": "X = 1\n"}, req)[0] == 0.0
