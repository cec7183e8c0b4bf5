"""The behaviour probe's tagged encoding of values (inputs rebuilt, outputs compared)."""

from __future__ import annotations

import collections
import datetime
import fractions
import json
import re

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


def test_a_view_of_bytes_round_trips_with_its_bytes_and_writability() -> None:
    """Binary protocols pass ``memoryview``s (hyperframe's ``parse_body``: 6 of the 519
    sampled real tasks had no behaviour checks for want of it); other shapes are refused."""
    for view in (memoryview(b"\x00\x01\xff"), memoryview(bytearray(b"ab"))[1:]):
        back = decode(json.loads(json.dumps(encode(view))))
        assert type(back) is memoryview and back == view and back.readonly == view.readonly
    assert encode(memoryview(b"ab")) != encode(memoryview(bytearray(b"ab")))
    with pytest.raises(Unencodable, match="one-dimensional"):
        encode(memoryview(b"abcd").cast("B", (2, 2)))
    released = memoryview(b"ab")
    released.release()
    with pytest.raises(Unencodable, match="released"):
        encode(released)


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


def test_strings_with_lone_surrogates_round_trip_through_strict_json() -> None:
    value = ["a\ud800b", {"k\udfff": 1}]
    data = json.loads(json.dumps(encode(value), ensure_ascii=False).encode("utf-8"))
    assert decode(data) == value


def test_compiled_patterns_and_matches_are_rebuilt() -> None:
    pattern = re.compile(r"(\d+)-(?P<b>\d+)", re.I)
    found = [pattern.match("1-2x"), pattern.search("ab 10-20 cd", 1), pattern.fullmatch("3-4")]
    for match in found:
        assert match is not None
        back = decode(json.loads(json.dumps(encode(match))))
        assert isinstance(back, re.Match)
        assert back.regs == match.regs and back.groupdict() == match.groupdict()
        assert back.re == pattern and back.string == match.string
    later = list(pattern.finditer("1-2 3-4"))[1]  # from its pos, search finds the first
    assert decode(encode(later)).regs == later.regs  # found again from where it starts
    assert decode(encode(pattern)) == pattern


class Handler:
    """A class whose parameter default is a lambda (xmltodict's ``_DictSAXHandler``)."""

    def __init__(self, callback: object = lambda v: v + 1, *, key: object = lambda: 0) -> None:
        self.callback = callback
        self.key = key


def test_a_lambda_that_is_a_parameter_default_is_encoded_by_where_it_is() -> None:
    packages = {__name__.partition(".")[0]}
    handler = Handler()
    data = json.loads(json.dumps(encode(handler, packages)))
    back = decode(data, packages)
    assert back.callback is handler.callback and back.key is handler.key
    with pytest.raises(Unencodable):  # a lambda made anywhere else has no such place
        encode(Handler(lambda v: v), packages)


def test_allowed_modules_are_encoded_by_name_and_others_refused() -> None:
    assert decode(json.loads(json.dumps(encode([json, re])))) == [json, re]
    with pytest.raises(Unencodable):
        encode(pytest)
    with pytest.raises(ProbeInputError):
        decode({"$module": "os"})


def test_a_method_bound_to_an_encodable_object_is_encoded_with_it() -> None:
    pattern = re.compile("a+")
    back = decode(json.loads(json.dumps(encode(pattern.match))))
    assert back("aab").group() == "aa"
    ordered = collections.OrderedDict(a=1)
    assert decode(encode(ordered.popitem))() == ("a", 1)
    with pytest.raises(ProbeInputError):  # never a dunder: no way to __class__ and beyond
        decode({"$bound": [1, "__class__"]})


class _Sentinel:
    def __reduce__(self) -> str:
        return "SENTINEL"  # pickle saves it as the global of that name


SENTINEL = _Sentinel()


def test_an_object_that_reduces_to_its_global_name_is_that_reference() -> None:
    packages = {__name__.partition(".")[0]}
    assert decode(encode(SENTINEL, packages), packages) is SENTINEL
    with pytest.raises(Unencodable):  # another object of the class is not that global
        encode(_Sentinel(), packages)
