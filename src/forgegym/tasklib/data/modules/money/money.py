"""Money amounts as integer cents."""


def parse_amount(text):
    """``"$1,234.5"`` -> 123450 cents; at most two decimals."""
    text = text.strip().replace(",", "").lstrip("$")
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    whole, _, frac = text.partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()) or len(frac) > 2:
        raise ValueError(f"bad amount {text!r}")
    cents = int(whole) * 100 + int(frac.ljust(2, "0") or "0")
    return -cents if negative else cents


def format_amount(cents):
    """123450 -> ``"$1,234.50"``; negatives as ``"-$5.00"``."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    whole, frac = divmod(cents, 100)
    return f"{sign}${whole:,}.{frac:02d}"


def split_evenly(cents, parts):
    """Split into ``parts`` amounts differing by at most one cent, larger ones first."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, extra = divmod(cents, parts)
    return [base + 1 if i < extra else base for i in range(parts)]


def apply_discount(cents, percent):
    """Price after a ``percent`` discount, rounded half up to the cent."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be within 0..100")
    return (cents * (100 - percent) + 50) // 100
