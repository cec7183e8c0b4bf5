"""Proleptic Gregorian calendar arithmetic (no wall clock)."""

_MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def is_leap(year):
    """Gregorian leap year rule."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year, month):
    """Days in ``month`` (1-12) of ``year``."""
    if not 1 <= month <= 12:
        raise ValueError("month must be 1..12")
    if month == 2 and is_leap(year):
        return 29
    return _MONTH_DAYS[month - 1]


def day_of_year(year, month, day):
    """1-based ordinal of the date within its year."""
    return sum(days_in_month(year, m) for m in range(1, month)) + day


def add_days(year, month, day, n):
    """The date ``n`` (>= 0) days later, as ``[year, month, day]``."""
    while n > 0:
        day += 1
        if day > days_in_month(year, month):
            day = 1
            month += 1
            if month > 12:
                month = 1
                year += 1
        n -= 1
    return [year, month, day]
