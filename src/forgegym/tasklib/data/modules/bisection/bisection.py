"""Binary search over sorted lists."""


def bisect_left(items, x):
    """First index at which ``x`` could be inserted keeping ``items`` sorted."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def bisect_right(items, x):
    """Last such insertion index (after any equal elements)."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < items[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def find(items, x):
    """Index of the first occurrence of ``x`` or -1."""
    i = bisect_left(items, x)
    if i < len(items) and items[i] == x:
        return i
    return -1


def count_in_range(items, low, high):
    """Number of elements ``v`` with ``low <= v <= high``."""
    return bisect_right(items, high) - bisect_left(items, low)
