"""Closed integer intervals ``[start, end]``."""


def merge(intervals):
    """Merge overlapping or touching intervals; the result is sorted."""
    result = []
    for start, end in sorted(intervals):
        if result and start <= result[-1][1]:
            result[-1][1] = max(result[-1][1], end)
        else:
            result.append([start, end])
    return result


def overlaps(a, b):
    """Whether two closed intervals share at least one point."""
    return a[0] <= b[1] and b[0] <= a[1]


def total_length(intervals):
    """Number of integer points covered by the union of ``intervals``."""
    return sum(end - start + 1 for start, end in merge(intervals))


def contains(intervals, point):
    """Whether any interval contains ``point``."""
    for start, end in intervals:
        if start <= point <= end:
            return True
    return False
