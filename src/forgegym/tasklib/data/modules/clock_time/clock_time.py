"""Times of day as ``"HH:MM"`` strings and minutes after midnight."""


def to_minutes(hhmm):
    """``"13:05"`` -> 785; raises ``ValueError`` on an invalid time."""
    hours, minutes = hhmm.split(":")
    h, m = int(hours), int(minutes)
    if not (0 <= h < 24 and 0 <= m < 60):
        raise ValueError(f"invalid time {hhmm!r}")
    return h * 60 + m


def from_minutes(total):
    """Minutes (any integer, wrapped to one day) -> ``"HH:MM"``."""
    total %= 24 * 60
    return f"{total // 60:02d}:{total % 60:02d}"


def add_minutes(hhmm, delta):
    """Time ``delta`` minutes after ``hhmm`` (wrapping at midnight)."""
    return from_minutes(to_minutes(hhmm) + delta)


def minutes_between(start, end):
    """Minutes from ``start`` forward to ``end`` (crossing midnight if needed)."""
    return (to_minutes(end) - to_minutes(start)) % (24 * 60)


def to_12h(hhmm):
    """``"13:05"`` -> ``"1:05 PM"``."""
    total = to_minutes(hhmm)
    h, m = divmod(total, 60)
    suffix = "AM" if h < 12 else "PM"
    h = h % 12
    if h == 0:
        h = 12
    return f"{h}:{m:02d} {suffix}"
