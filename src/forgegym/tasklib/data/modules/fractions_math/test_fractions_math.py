import pytest

from fractions_math import add, compare, gcd, lcm, reduce


def test_gcd_lcm():
    assert gcd(12, 18) == 6
    assert gcd(-4, 6) == 2
    assert lcm(4, 6) == 12
    assert lcm(0, 5) == 0


def test_reduce():
    assert reduce(6, -8) == [-3, 4]


def test_reduce_zero():
    with pytest.raises(ZeroDivisionError):
        reduce(1, 0)


def test_add():
    assert add([1, 2], [1, 3]) == [5, 6]


def test_compare():
    assert compare([1, 2], [2, 3]) == -1
    assert compare([2, 4], [1, 2]) == 0
    assert compare([3, 4], [2, 3]) == 1
