import pytest

from run_length import compress, decode, encode, longest_run


def test_encode():
    assert encode("aabccc") == [["a", 2], ["b", 1], ["c", 3]]


def test_decode_roundtrip():
    assert decode(encode("xxyzzz")) == "xxyzzz"


def test_decode_negative():
    with pytest.raises(ValueError):
        decode([["a", -1]])


def test_compress():
    assert compress("aaabcc") == "a3bc2"
    assert compress("") == ""


def test_longest_run():
    assert longest_run("abbbcc") == ["b", 3]
    assert longest_run("aabb") == ["a", 2]
    assert longest_run("") is None
