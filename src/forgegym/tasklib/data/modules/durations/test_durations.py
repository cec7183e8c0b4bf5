import pytest

from durations import clock, format_duration, parse_duration


def test_parse():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("2d5s") == 172805


def test_parse_errors():
    with pytest.raises(ValueError):
        parse_duration("h")
    with pytest.raises(ValueError):
        parse_duration("12")


def test_format():
    assert format_duration(3661) == "1h1m1s"
    assert format_duration(0) == "0s"
    assert format_duration(86400) == "1d"


def test_clock():
    assert clock(3725) == "1:02:05"
