import pytest

from money import apply_discount, format_amount, parse_amount, split_evenly


def test_parse():
    assert parse_amount("$1,234.5") == 123450
    assert parse_amount("-0.07") == -7


def test_parse_bad():
    with pytest.raises(ValueError):
        parse_amount("1.234")


def test_format():
    assert format_amount(123450) == "$1,234.50"
    assert format_amount(-500) == "-$5.00"


def test_split():
    assert split_evenly(100, 3) == [34, 33, 33]


def test_discount():
    assert apply_discount(999, 10) == 899
    assert apply_discount(1000, 100) == 0
