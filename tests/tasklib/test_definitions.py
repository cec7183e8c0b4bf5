"""``find_definition``: a dotted path to its ``def`` or ``class``, scope by scope."""

from __future__ import annotations

import ast

from forgegym.tasklib.definitions import find_definition

SOURCE = """
def top():
    def inner():
        pass

class Box:
    async def get(self):
        pass

    class Lid:
        def open(self):
            pass
"""


def test_functions_methods_nested_and_classes_are_found() -> None:
    tree = ast.parse(SOURCE)
    found = {
        ".".join(p): type(find_definition(tree, p)).__name__
        for p in (["top"], ["top", "inner"], ["Box"], ["Box", "get"], ["Box", "Lid", "open"])
    }
    assert found == {
        "top": "FunctionDef",
        "top.inner": "FunctionDef",
        "Box": "ClassDef",
        "Box.get": "AsyncFunctionDef",
        "Box.Lid.open": "FunctionDef",
    }


def test_a_missing_name_at_any_scope_is_none() -> None:
    tree = ast.parse(SOURCE)
    assert find_definition(tree, ["Box", "put"]) is None
    assert find_definition(tree, ["get"]) is None  # a method is not module-level
    assert find_definition(tree, []) is None
