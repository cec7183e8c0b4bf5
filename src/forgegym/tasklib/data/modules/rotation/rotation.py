"""Rotating lists and strings."""


def rotate_left(items, k):
    """Rotate left by ``k`` positions (``k`` may exceed the length)."""
    if not items:
        return []
    k %= len(items)
    return items[k:] + items[:k]


def rotate_right(items, k):
    """Rotate right by ``k`` positions."""
    if not items:
        return []
    k %= len(items)
    return items[len(items) - k :] + items[: len(items) - k]


def is_rotation(a, b):
    """Whether string ``b`` is a rotation of string ``a``."""
    return len(a) == len(b) and b in a + a


def min_rotation(text):
    """Lexicographically smallest rotation of ``text``."""
    best = text
    for i in range(1, len(text)):
        candidate = text[i:] + text[:i]
        if candidate < best:
            best = candidate
    return best
