"""Merging sorted sequences."""


def merge(a, b):
    """Merge two sorted lists (stable: ties take from ``a`` first)."""
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    out.extend(a[i:])
    out.extend(b[j:])
    return out


def merge_all(lists):
    """Merge any number of sorted lists."""
    result = []
    for items in lists:
        result = merge(result, items)
    return result


def is_sorted(items):
    """Non-decreasing order check."""
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def intersect_sorted(a, b):
    """Common elements of two sorted lists (with multiplicity)."""
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i += 1
            j += 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return out
