import pytest

from roman import from_roman, to_roman


def test_to_roman():
    assert to_roman(1994) == "MCMXCIV"
    assert to_roman(4) == "IV"
    assert to_roman(3) == "III"


def test_to_roman_range():
    with pytest.raises(ValueError):
        to_roman(0)


def test_from_roman():
    assert from_roman("MCMXCIV") == 1994
    assert from_roman("XL") == 40
    assert from_roman("VIII") == 8


def test_from_roman_bad():
    with pytest.raises(ValueError):
        from_roman("XQ")
