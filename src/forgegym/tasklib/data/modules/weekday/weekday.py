"""Weekdays of calendar dates (Monday = 0), computed without the wall clock."""

NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def weekday(year, month, day):
    """Day of week, Monday = 0, via Zeller's congruence."""
    if month < 3:
        month += 12
        year -= 1
    k = year % 100
    j = year // 100
    h = (day + 13 * (month + 1) // 5 + k + k // 4 + j // 4 + 5 * j) % 7
    return (h + 5) % 7


def weekday_name(year, month, day):
    """English name of the weekday."""
    return NAMES[weekday(year, month, day)]


def is_weekend(year, month, day):
    """Saturday or Sunday."""
    return weekday(year, month, day) >= 5


def days_until(current, target):
    """Days from weekday ``current`` forward to the next ``target`` (0 if equal)."""
    return (target - current) % 7
