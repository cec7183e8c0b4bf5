"""Trimmed from mahmoud/boltons boltons/iterutils.py at the parent of 03c8a66187da: same (see case.json)."""

_UNSET = object()


def same(iterable, ref=_UNSET):
    """``same()`` returns ``True`` when all values in *iterable* are
    equal to one another, or optionally a reference value,
    *ref*. Similar to :func:`all` and :func:`any` in that it evaluates
    an iterable and returns a :class:`bool`. ``same()`` returns
    ``True`` for empty iterables.

    >>> same([])
    True
    >>> same([1])
    True
    >>> same(['a', 'a', 'a'])
    True
    >>> same(range(20))
    False
    >>> same([[], []])
    True
    >>> same([[], []], ref='test')
    False

    """
    iterator = iter(iterable)
    if ref is _UNSET:
        try:
            ref = next(iterator)
        except StopIteration:
            return True  # those that were there were all equal
    for val in iterator:
        if val != ref:
            return False  # short circuit on first unequal value
    return True
