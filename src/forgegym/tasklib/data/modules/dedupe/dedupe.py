"""Duplicate detection in lists."""


def unique(items):
    """Items in first-seen order without repeats."""
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def duplicates(items):
    """Items that occur more than once, in order of their second occurrence."""
    seen = set()
    reported = set()
    out = []
    for item in items:
        if item in seen and item not in reported:
            reported.add(item)
            out.append(item)
        seen.add(item)
    return out


def first_repeat_index(items):
    """Index of the first element equal to an earlier one, or -1."""
    seen = set()
    for i, item in enumerate(items):
        if item in seen:
            return i
        seen.add(item)
    return -1


def compact(items):
    """Collapse consecutive equal elements into one."""
    out = []
    for item in items:
        if not out or out[-1] != item:
            out.append(item)
    return out
