"""Bit manipulation on non-negative integers."""


def popcount(n):
    """Number of set bits."""
    count = 0
    while n:
        n &= n - 1
        count += 1
    return count


def is_power_of_two(n):
    """Whether ``n`` is a positive power of two."""
    return n > 0 and n & (n - 1) == 0


def reverse_bits(n, width):
    """Reverse the lowest ``width`` bits of ``n``."""
    out = 0
    for _ in range(width):
        out = (out << 1) | (n & 1)
        n >>= 1
    return out


def gray_code(bits):
    """The reflected Gray code sequence of ``bits`` bits."""
    return [i ^ (i >> 1) for i in range(1 << bits)]


def bit_positions(n):
    """Indices of set bits, lowest first."""
    out = []
    i = 0
    while n:
        if n & 1:
            out.append(i)
        n >>= 1
        i += 1
    return out
