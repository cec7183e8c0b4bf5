"""Trimmed from mahmoud/boltons boltons/strutils.py at the parent of 4348a49c1c4b: _ORDINAL_MAP, ordinalize (see case.json)."""

import string

unicode = str


_ORDINAL_MAP = {'1': 'st',
                '2': 'nd',
                '3': 'rd'}  # 'th' is the default


def ordinalize(number, ext_only=False):
    """Turns *number* into its cardinal form, i.e., 1st, 2nd,
    3rd, 4th, etc. If the last character isn't a digit, it returns the
    string value unchanged.

    Args:
        number (int or str): Number to be cardinalized.
        ext_only (bool): Whether to return only the suffix. Default ``False``.

    >>> print(ordinalize(1))
    1st
    >>> print(ordinalize(3694839230))
    3694839230th
    >>> print(ordinalize('hi'))
    hi

    """
    numstr = unicode(number)
    rdig, ext = numstr[-2:], ''
    if not rdig:
        return ''
    if rdig[-1] in string.digits:
        if len(rdig) == 2 and rdig[0] == '1':
            ext = 'th'
        else:
            ext = _ORDINAL_MAP.get(rdig[-1], 'th')
    if ext_only:
        return ext
    else:
        return numstr + ext
