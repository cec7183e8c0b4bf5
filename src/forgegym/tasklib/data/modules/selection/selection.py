"""Order statistics without full sorting where it matters."""


def kth_smallest(values, k):
    """The ``k``-th smallest (1-based) value."""
    if not 1 <= k <= len(values):
        raise IndexError("k out of range")
    pivot = values[len(values) // 2]
    lows = [v for v in values if v < pivot]
    highs = [v for v in values if v > pivot]
    equal = len(values) - len(lows) - len(highs)
    if k <= len(lows):
        return kth_smallest(lows, k)
    if k <= len(lows) + equal:
        return pivot
    return kth_smallest(highs, k - len(lows) - equal)


def top_n(values, n):
    """The ``n`` largest values in descending order."""
    return sorted(values, reverse=True)[:n]


def second_largest(values):
    """Largest value strictly below the maximum, or None."""
    best = second = None
    for v in values:
        if best is None or v > best:
            best, second = v, best
        elif v < best and (second is None or v > second):
            second = v
    return second


def argmax(values):
    """Index of the first maximum, or -1 for an empty list."""
    index = -1
    for i, v in enumerate(values):
        if index < 0 or v > values[index]:
            index = i
    return index
