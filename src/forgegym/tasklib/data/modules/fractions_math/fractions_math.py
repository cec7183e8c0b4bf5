"""Integer gcd/lcm and fractions as ``[numerator, denominator]``."""


def gcd(a, b):
    """Greatest common divisor (non-negative)."""
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


def lcm(a, b):
    """Least common multiple (0 if either is 0)."""
    if a == 0 or b == 0:
        return 0
    return abs(a * b) // gcd(a, b)


def reduce(num, den):
    """Lowest terms with a positive denominator."""
    if den == 0:
        raise ZeroDivisionError("zero denominator")
    g = gcd(num, den)
    num, den = num // g, den // g
    if den < 0:
        num, den = -num, -den
    return [num, den]


def add(a, b):
    """Sum of two fractions, reduced."""
    return reduce(a[0] * b[1] + b[0] * a[1], a[1] * b[1])


def compare(a, b):
    """-1, 0 or 1 as ``a`` is less than, equal to or greater than ``b``."""
    left = a[0] * b[1]
    right = b[0] * a[1]
    if (a[1] < 0) != (b[1] < 0):
        left, right = right, left
    return (left > right) - (left < right)
