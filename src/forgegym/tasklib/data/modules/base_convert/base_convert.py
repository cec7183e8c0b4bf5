"""Integer <-> string conversions in bases 2..36."""

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def to_base(n, base):
    """Render ``n`` in ``base`` (negative numbers get a leading minus)."""
    if not 2 <= base <= 36:
        raise ValueError("base must be in 2..36")
    if n == 0:
        return "0"
    sign = "-" if n < 0 else ""
    n = abs(n)
    digits = []
    while n > 0:
        digits.append(DIGITS[n % base])
        n //= base
    return sign + "".join(reversed(digits))


def from_base(text, base):
    """Parse ``text`` written in ``base`` (case-insensitive)."""
    if not 2 <= base <= 36:
        raise ValueError("base must be in 2..36")
    text = text.strip().lower()
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    if not text:
        raise ValueError("no digits")
    value = 0
    for ch in text:
        d = DIGITS.find(ch)
        if d < 0 or d >= base:
            raise ValueError(f"bad digit {ch!r}")
        value = value * base + d
    return -value if negative else value


def digit_sum(n, base=10):
    """Sum of the digits of ``abs(n)`` in ``base``."""
    n = abs(n)
    total = 0
    while n:
        total += n % base
        n //= base
    return total
