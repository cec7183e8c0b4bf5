"""The behaviour probe's tagged encoding of values (inputs rebuilt, outputs compared)."""

from __future__ import annotations

import collections
import datetime
import fractions
import json

import pytest

from forgegym.tasklib.probe import ProbeInputError, Unencodable, call, decode, encode


@pytest.mark.parametrize(
    "value",
    [
        None, True, 3, 2.5, "x", [1, (2, 3)], {"a": 1, 2: "b"}, {1, 2}, frozenset({"a"}),
        b"\x00\xff", bytearray(b"ab"), float("inf"), complex(1, 2),
        fractions.Fraction(1, 3), datetime.date(2024, 2, 29), collections.OrderedDict(a=1),
    ],
)  # fmt: skip
def test_plain_and_stdlib_values_round_trip_through_json(value: object) -> None:
    data = json.loads(json.dumps(encode(value)))
    back = decode(data)
    assert back == value and type(back) is type(value)


class Foreign:  # a class of a module that is not allowed (this test module)
    def __init__(self) -> None:
        self.x = 1


def test_values_of_foreign_modules_and_lambdas_are_not_inputs() -> None:
    with pytest.raises(Unencodable):
        encode(Foreign())
    with pytest.raises(Unencodable):
        encode(lambda: 1)
    assert encode(Foreign(), lenient=True) == {"$opaque": f"{__name__}.Foreign"}


def test_a_cycle_is_not_encodable() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(Unencodable):
        encode(loop)


def test_decoding_refuses_callables_outside_the_allowed_modules() -> None:
    with pytest.raises(ProbeInputError):
        decode({"$reduce": ["os:system", ["true"], None, None, None]})
    with pytest.raises(ProbeInputError):
        decode({"$ref": "subprocess:run"})


def test_call_runs_a_function_and_encodes_result_and_arguments() -> None:
    out = call("operator", "add", "function", None, [{"$tuple": [1]}, {"$tuple": [2]}], [], [])
    assert out["r"] == {"$tuple": [1, 2]}
    ordered = encode(collections.OrderedDict(a=1))
    out = call("collections", "OrderedDict.popitem", "method", ordered, [], [], [])
    assert out["r"] == {"$tuple": ["a", 1]}
    assert decode(out["self"]) == collections.OrderedDict()  # the receiver after the call
    with pytest.raises(ProbeInputError):  # a receiver of another class is not rebuilt
        call("collections", "OrderedDict.popitem", "method", {"$dict": []}, [], [], [])
