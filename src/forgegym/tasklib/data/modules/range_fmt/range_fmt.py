"""Compact range notation such as ``"1-3,5,7-8"``."""


def summarize(numbers):
    """Sorted unique integers to range notation."""
    values = sorted(set(numbers))
    parts = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        if j == i:
            parts.append(str(values[i]))
        else:
            parts.append(f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(parts)


def expand(text):
    """Range notation back to a sorted list of unique integers."""
    result = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part[1:]:
            cut = part.index("-", 1)
            lo, hi = int(part[:cut]), int(part[cut + 1 :])
            if lo > hi:
                raise ValueError(f"empty range {part!r}")
            result.update(range(lo, hi + 1))
        else:
            result.add(int(part))
    return sorted(result)


def count(text):
    """How many integers a range notation denotes."""
    return len(expand(text))
