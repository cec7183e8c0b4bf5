"""Roman numerals."""

_VALUES = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
]
_DIGITS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number):
    """Integer in 1..3999 to a Roman numeral."""
    if not 0 < number < 4000:
        raise ValueError("out of range")
    parts = []
    for value, letters in _VALUES:
        while number >= value:
            parts.append(letters)
            number -= value
    return "".join(parts)


def from_roman(text):
    """Roman numeral to integer (subtractive pairs allowed)."""
    if not text:
        raise ValueError("empty numeral")
    total = 0
    for i, ch in enumerate(text):
        if ch not in _DIGITS:
            raise ValueError(f"bad digit {ch!r}")
        value = _DIGITS[ch]
        if i + 1 < len(text) and _DIGITS.get(text[i + 1], 0) > value:
            total -= value
        else:
            total += value
    return total
