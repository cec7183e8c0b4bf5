import pytest

from base_convert import digit_sum, from_base, to_base


def test_to_base():
    assert to_base(255, 16) == "ff"
    assert to_base(-5, 2) == "-101"
    assert to_base(0, 7) == "0"


def test_from_base():
    assert from_base("FF", 16) == 255
    assert from_base("-101", 2) == -5


def test_bad_digit():
    with pytest.raises(ValueError):
        from_base("12", 2)


def test_digit_sum():
    assert digit_sum(1234) == 10
    assert digit_sum(-7, 2) == 3
