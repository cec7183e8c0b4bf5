"""Durations like ``"1h30m15s"``."""

UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """Total seconds of a duration made of ``<int><unit>`` parts."""
    total = 0
    number = ""
    for ch in text.strip():
        if ch.isdigit():
            number += ch
        elif ch in UNITS:
            if not number:
                raise ValueError(f"unit {ch!r} without a number")
            total += int(number) * UNITS[ch]
            number = ""
        else:
            raise ValueError(f"bad character {ch!r}")
    if number:
        raise ValueError("trailing number without unit")
    return total


def format_duration(seconds):
    """Largest units first, zero parts omitted; ``0`` -> ``"0s"``."""
    if seconds < 0:
        raise ValueError("negative duration")
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS.items():
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts)


def clock(seconds):
    """``H:MM:SS`` for a non-negative number of seconds."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
