"""Descriptive statistics on lists of numbers."""


def mean(values):
    """Arithmetic mean; raises ``ValueError`` on an empty list."""
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def median(values):
    """Middle value; the mean of the two middle values for an even count."""
    if not values:
        raise ValueError("median of empty data")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def mode(values):
    """Most common value; ties go to the smallest."""
    if not values:
        raise ValueError("mode of empty data")
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    best = None
    for v in sorted(counts):
        if best is None or counts[v] > counts[best]:
            best = v
    return best


def variance(values):
    """Population variance."""
    mu = mean(values)
    return sum((v - mu) ** 2 for v in values) / len(values)


def value_range(values):
    """``max - min``."""
    if not values:
        raise ValueError("range of empty data")
    return max(values) - min(values)
