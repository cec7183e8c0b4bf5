"""Descriptive statistics on lists of numbers (one module that grew too big)."""

import math


def _require(values, what):
    if not values:
        raise ValueError(f"{what} of empty data")


def mean(values):
    """Arithmetic mean; raises ``ValueError`` on an empty list."""
    _require(values, "mean")
    return sum(values) / len(values)


def median(values):
    """Middle value; the mean of the two middle values for an even count."""
    _require(values, "median")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def std_dev(values, sample=False):
    """Standard deviation (population by default, ``sample=True`` for n - 1)."""
    _require(values, "std_dev")
    if sample and len(values) < 2:
        raise ValueError("sample std_dev needs at least two values")
    mu = mean(values)
    squares = sum((v - mu) ** 2 for v in values)
    return math.sqrt(squares / (len(values) - 1 if sample else len(values)))


def percentile(values, q):
    """The ``q``-th percentile (0..100) with linear interpolation between ranks,
    rounded to 6 decimals."""
    _require(values, "percentile")
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    fraction = rank - low
    return round(ordered[low] + (ordered[high] - ordered[low]) * fraction, 6)
