"""Trimmed from mahmoud/boltons boltons/dictutils.py at the parent of 8afe1601292b: subdict (see case.json)."""


def subdict(d, keep=None, drop=None):
    """Compute the 'sub-dictionnary' of a dict.

    A 'sub-dictionnary' is to a dictionnary what a subset is a to set. If _A_
    is a 'sub-dictionnary' of _B_, that means that all keys of _A_ are present
    in _B_.

    This does NOT mutate the original dictionnary in any way.

    >>> from pprint import pprint as pp
    >>> pp(subdict({'a': 1, 'b': 2}))
    {'a': 1, 'b': 2}
    >>> subdict({'a': 1, 'b': 2, 'c': 3}, drop=['b', 'c'])
    {'a': 1}
    >>> pp(subdict({'a': 1, 'b': 2, 'c': 3}, keep=['a', 'c']))
    {'a': 1, 'c': 3}
    """
    if keep is None:
        keep = d.keys()
    if drop is None:
        drop = []

    keep = set(keep)
    drop = set(drop)
    keys = keep - drop

    # d.iteritems in Python 2, d.items in Python 3
    d_iteritems = getattr(d, 'iteritems', d.items)
    return dict((k, v) for k, v in d_iteritems() if k in keys)
