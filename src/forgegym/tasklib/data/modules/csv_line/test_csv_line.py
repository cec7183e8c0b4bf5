import pytest

from csv_line import join_line, parse_pairs, split_line


def test_split_plain():
    assert split_line("a,b,,c") == ["a", "b", "", "c"]


def test_split_quoted():
    assert split_line('x,"a,b",y') == ["x", "a,b", "y"]
    assert split_line('"say ""hi"""') == ['say "hi"']


def test_unterminated():
    with pytest.raises(ValueError):
        split_line('"abc')


def test_parse_pairs():
    assert parse_pairs(" a=1; b=x=y ;") == {"a": "1", "b": "x=y "}


def test_join_roundtrip():
    fields = ["p", "q,r", 's"t']
    assert split_line(join_line(fields)) == fields
