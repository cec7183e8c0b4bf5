"""Trimmed from python-humanize/humanize src/humanize/number.py at the parent of 4c76d35c3023: powers, human_powers, intword (see case.json)."""

from __future__ import annotations

import math


def _ngettext(message: str, plural: str, num: int) -> str:
    # humanize.i18n's _ngettext with no translation activated
    return message if num == 1 else plural


def NS_(message: str, plural: str) -> tuple[str, str]:
    # humanize.i18n's _ngettext_noop
    return message, plural


powers = [10**x for x in (3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 100)]


human_powers = (
    NS_("thousand", "thousand"),
    NS_("million", "million"),
    NS_("billion", "billion"),
    NS_("trillion", "trillion"),
    NS_("quadrillion", "quadrillion"),
    NS_("quintillion", "quintillion"),
    NS_("sextillion", "sextillion"),
    NS_("septillion", "septillion"),
    NS_("octillion", "octillion"),
    NS_("nonillion", "nonillion"),
    NS_("decillion", "decillion"),
    NS_("googol", "googol"),
)


def intword(value: NumberOrString, format: str = "%.1f") -> str:
    """Converts a large integer to a friendly text representation.

    Works best for numbers over 1 million. For example, 1_000_000 becomes "1.0 million",
    1200000 becomes "1.2 million" and "1_200_000_000" becomes "1.2 billion". Supports up
    to decillion (33 digits) and googol (100 digits).

    Examples:
        ```pycon
        >>> intword("100")
        '100'
        >>> intword("12400")
        '12.4 thousand'
        >>> intword("1000000")
        '1.0 million'
        >>> intword(1_200_000_000)
        '1.2 billion'
        >>> intword(8100000000000000000000000000000000)
        '8.1 decillion'
        >>> intword(None)
        'None'
        >>> intword("1234000", "%0.3f")
        '1.234 million'

        ```
    Args:
        value (int, float, str): Integer to convert.
        format (str): To change the number of decimal or general format of the number
            portion.

    Returns:
        str: Friendly text representation as a string, unless the value passed could not
        be coaxed into an `int`.
    """
    try:
        value = int(value)
    except (TypeError, ValueError):
        return str(value)

    is_negative = value < 0

    if is_negative:
        value *= -1

    if value < powers[0]:
        return "-" + str(value) if is_negative else str(value)
    for ordinal, power in enumerate(powers[1:], 1):
        if value < power:
            chopped = value / float(powers[ordinal - 1])
            if float(format % chopped) == float(10**3):
                chopped = value / float(powers[ordinal])
                singular, plural = human_powers[ordinal]
                if is_negative:
                    return (
                        "-"
                        + " ".join(
                            [format, _ngettext(singular, plural, math.ceil(chopped))]
                        )
                    ) % chopped

                return (
                    " ".join([format, _ngettext(singular, plural, math.ceil(chopped))])
                ) % chopped
            else:
                singular, plural = human_powers[ordinal - 1]
                if is_negative:
                    return (
                        "-"
                        + " ".join(
                            [format, _ngettext(singular, plural, math.ceil(chopped))]
                        )
                    ) % chopped
                return (
                    " ".join([format, _ngettext(singular, plural, math.ceil(chopped))])
                ) % chopped

    return "-" + str(value) if is_negative else str(value)
