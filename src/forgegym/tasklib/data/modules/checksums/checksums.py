"""Check digits: Luhn, ISBN-10 and a simple additive checksum."""


def luhn_valid(number):
    """Luhn check of a digit string (spaces ignored)."""
    digits = [int(c) for c in number if c != " "]
    if len(digits) < 2:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def luhn_digit(partial):
    """The digit that makes ``partial + digit`` Luhn-valid."""
    for d in range(10):
        if luhn_valid(partial + str(d)):
            return d
    raise ValueError("no check digit")


def isbn10_valid(isbn):
    """ISBN-10 validity (hyphens ignored, final ``X`` = 10)."""
    chars = [c for c in isbn if c != "-"]
    if len(chars) != 10:
        return False
    total = 0
    for i, c in enumerate(chars):
        if c == "X" and i == 9:
            value = 10
        elif c.isdigit():
            value = int(c)
        else:
            return False
        total += (10 - i) * value
    return total % 11 == 0


def mod_checksum(data, modulus=256):
    """Sum of character codes modulo ``modulus``."""
    return sum(ord(c) for c in data) % modulus
