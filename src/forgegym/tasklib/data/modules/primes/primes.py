"""Prime numbers."""


def is_prime(n):
    """Trial division primality test."""
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def primes_upto(limit):
    """All primes ``<= limit`` (sieve of Eratosthenes)."""
    if limit < 2:
        return []
    sieve = [True] * (limit + 1)
    sieve[0] = sieve[1] = False
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            for j in range(i * i, limit + 1, i):
                sieve[j] = False
    return [i for i, flag in enumerate(sieve) if flag]


def factorize(n):
    """Prime factors of ``n >= 2`` in ascending order, with multiplicity."""
    if n < 2:
        raise ValueError("n must be >= 2")
    factors = []
    d = 2
    while d * d <= n:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
    if n > 1:
        factors.append(n)
    return factors


def next_prime(n):
    """Smallest prime strictly greater than ``n``."""
    candidate = n + 1
    while not is_prime(candidate):
        candidate += 1
    return candidate
