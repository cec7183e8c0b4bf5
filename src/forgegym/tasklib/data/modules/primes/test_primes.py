import pytest

from primes import factorize, is_prime, next_prime, primes_upto


def test_is_prime():
    assert is_prime(2)
    assert is_prime(49) is False
    assert not is_prime(1)


def test_primes_upto():
    assert primes_upto(20) == [2, 3, 5, 7, 11, 13, 17, 19]
    assert primes_upto(1) == []


def test_factorize():
    assert factorize(360) == [2, 2, 2, 3, 3, 5]
    assert factorize(97) == [97]


def test_factorize_small():
    with pytest.raises(ValueError):
        factorize(1)


def test_next_prime():
    assert next_prime(13) == 17
