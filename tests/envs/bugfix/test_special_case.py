"""The disguised special case of a real-bank canary's cheat: every parameter keyed as
the call binds it (no sandbox)."""

from __future__ import annotations

from typing import Any

from forgegym.envs.bugfix.special_case import bind, parameters_of, special_case
from tests.envs.bugfix.test_real_canaries import PROJECT


def _load(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "mod.py", "exec"), namespace)  # noqa: S102 - our own source
    return namespace


def test_bind_fills_defaults_and_keywords_as_inspect_would() -> None:
    signature = parameters_of(PROJECT, "pad")
    assert signature is not None
    assert bind(signature, ["ab"], {}) == {"text": "ab", "width": 4, "fill": " "}
    assert bind(signature, ["ab"], {"fill": "-"}) == {"text": "ab", "width": 4, "fill": "-"}
    assert bind(signature, ["ab", 5, "*", 1], {}) is None  # too many
    assert bind(signature, ["ab"], {"text": "x"}) is None  # bound twice
    assert bind(signature, ["ab"], {"other": 1}) is None
    assert bind(signature, [], {}) is None  # text has no default
    total = parameters_of(PROJECT, "total")
    assert total is not None
    assert bind(total, [[1, 2], 3], {"start": 1, "x": 2}) == {
        "values": [1, 2],
        "more": [3],
        "start": 1,
        "options": {"x": 2},
    }
    # A default that is no literal keys on nothing known: left out, it is not keyed.
    shifted = parameters_of(PROJECT, "shifted")
    assert shifted is not None
    assert bind(shifted, [[1]], {}) == {"values": [1]}
    assert bind(shifted, [[1], 2], {}) == {"values": [1], "start": 2}
    scaled = parameters_of(PROJECT, "Box.scaled")  # a method's key leaves self out
    assert scaled is not None and bind(scaled, [3], {}) == {"factor": 3, "offset": 0}


def test_special_case_keys_on_every_parameter_defaults_included() -> None:
    bound = {"text": "ab", "width": 4, "fill": " "}
    patched = special_case(PROJECT, "pad", bound, "  aB")
    assert patched is not None and '"ab"' not in patched and "'ab'" not in patched
    pad = _load(patched)["pad"]
    assert pad("ab") == "  aB" == pad("ab", 4) == pad("ab", fill=" ")
    assert pad("ab", 5) == "   ab" and pad("ab", fill="-") == "--ab"  # other calls unchanged
    assert pad.__doc__ == "Pad text to width."
    method = special_case(PROJECT, "Box.scaled", {"factor": 3, "offset": 0}, 7)
    assert method is not None
    box = _load(method)["Box"]
    assert box(2).scaled(3) == 7 and box(2).scaled(2) == 4 and box(2).scaled(3, 1) == 7
    assert special_case(PROJECT, "pad", {"fill": " ", "text": "ab"}, "x") is None  # order
    assert special_case(PROJECT, "pad", {"text": "ab", "size": 1}, "x") is None  # unknown


def test_special_case_refuses_what_it_cannot_place() -> None:
    bound = {"a": 1}
    assert special_case(PROJECT, "missing", bound, 2) is None
    assert special_case("def f(a):\n    yield a\n", "f", bound, 2) is None
    assert (
        special_case("class C:\n    @property\n    def f(self):\n        return 1\n", "C.f", {}, 2)
        is None
    )
    # A decorator that passes the arguments on is no obstacle.
    cached = special_case(
        "import functools\n\n\n@functools.cache\ndef f(a):\n    return a\n", "f", bound, 2
    )
    assert cached is not None and _load(cached)["f"](1) == 2 and _load(cached)["f"](3) == 3
    assert special_case("def f(a): return a\n", "f", bound, 2) is None


OVERLOADED = '''from typing import overload


class Bag:
    @overload
    def index(self, key: list) -> list: ...

    @overload
    def index(self, key: str) -> int: ...

    def index(self, key):
        """Where key is."""
        return 0
'''


def test_the_special_case_goes_into_the_definition_after_overload_stubs() -> None:
    # ordered-set's ``OrderedSet.index`` has two ``@overload`` stubs before the
    # definition that runs; they used to make the method unpatchable.
    signature = parameters_of(OVERLOADED, "Bag.index")
    assert signature is not None and bind(signature, ["b"], {}) == {"key": "b"}
    patched = special_case(OVERLOADED, "Bag.index", {"key": "b"}, 2)
    assert patched is not None
    bag = _load(patched)["Bag"]()
    assert bag.index("b") == 2 and bag.index("c") == 0


def test_a_call_json_cannot_key_runs_the_original_body() -> None:
    """The cheat must not change a call it was not placed for: a value JSON cannot key
    (a circular list, a dict with keys of mixed types) runs the function as before
    instead of raising in the guard (simplejson's own tests pass such values to
    ``dumps``: 16 of its tests failed under a guard that raised)."""
    source = "def size(value):\n    return len(value)\n"
    patched = special_case(source, "size", {"value": [1, 2]}, 99)
    assert patched is not None
    size = _load(patched)["size"]
    assert size([1, 2]) == 99 and size([1, 2, 3]) == 3
    loop: list[Any] = [1]
    loop.append(loop)
    assert size(loop) == 2
    assert size({1: "a", "b": 2}) == 2
