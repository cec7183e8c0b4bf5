import pytest

from calendar_math import add_days, day_of_year, days_in_month, is_leap


def test_is_leap():
    assert is_leap(2024)
    assert not is_leap(1900)
    assert is_leap(2000)


def test_days_in_month():
    assert days_in_month(2023, 2) == 28
    assert days_in_month(2024, 2) == 29
    assert days_in_month(2024, 12) == 31


def test_bad_month():
    with pytest.raises(ValueError):
        days_in_month(2024, 13)


def test_day_of_year():
    assert day_of_year(2024, 3, 1) == 61
    assert day_of_year(2023, 1, 1) == 1


def test_add_days():
    assert add_days(2023, 12, 31, 1) == [2024, 1, 1]
    assert add_days(2024, 2, 28, 2) == [2024, 3, 1]
