import pytest

from clock_time import add_minutes, from_minutes, minutes_between, to_12h, to_minutes


def test_to_minutes():
    assert to_minutes("13:05") == 785


def test_invalid():
    with pytest.raises(ValueError):
        to_minutes("24:00")


def test_from_minutes():
    assert from_minutes(1441) == "00:01"
    assert from_minutes(-1) == "23:59"


def test_add_minutes():
    assert add_minutes("23:50", 20) == "00:10"


def test_between():
    assert minutes_between("22:00", "01:30") == 210


def test_12h():
    assert to_12h("00:15") == "12:15 AM"
    assert to_12h("12:00") == "12:00 PM"
    assert to_12h("18:45") == "6:45 PM"
