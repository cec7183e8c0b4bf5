"""The pass@k estimator and Beta-posterior moments used by the scheduler.

:func:`pass_at_k` is the unbiased estimator of Chen et al. (2021),
``1 - C(n-c, k) / C(n, k)``, computed as the product
``1 - prod_{i=n-c+1}^{n} (1 - k / i)`` so that it never forms huge binomials.

The posterior helpers give closed forms under ``p ~ Beta(a, b)``:

* ``E[(1-p)^k] = prod_{i<k} (b+i)/(a+b+i)``, hence the expected pass@k;
* ``E[p(1-p)] = ab / ((a+b)(a+b+1))``, the expected GRPO learning signal (a group
  gives a gradient only when its outcomes differ);
* ``E[k p (1-p)^k]``, the expected slope of pass@k in logit space: how much one unit
  of skill on this task moves its pass@k. It peaks at ``p = 1/(k+1)``.
"""

from __future__ import annotations

import math

from forgegym.core.env import check_positive_int

__all__ = [
    "beta_expected_pass_at_k",
    "beta_expected_passk_slope",
    "beta_expected_variance",
    "pass_at_k",
]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass@k from ``c`` successes in ``n`` samples.

    Args:
        n: number of samples drawn (>= 1).
        c: number of them that passed (0 <= c <= n).
        k: the k of pass@k (1 <= k <= n).

    Returns:
        ``1 - C(n-c, k) / C(n, k)``; exactly 1.0 when ``n - c < k`` (every size-k
        subset then contains a success).

    Raises:
        ValueError: an argument is not an integer or is out of range; the message
            names it.
    """
    check_positive_int("n", n, minimum=1)
    check_positive_int("c", c, minimum=0)
    check_positive_int("k", k, minimum=1)
    if c > n:
        raise ValueError(f"c must be <= n ({n}), got {c!r}")
    if k > n:
        raise ValueError(f"k must be <= n ({n}), got {k!r}")
    if n - c < k:
        return 1.0
    # Product form: C(n-c,k)/C(n,k) = prod_{i=n-c+1}^{n} (1 - k/i); stable for large n.
    ratio = 1.0
    for i in range(n - c + 1, n + 1):
        ratio *= 1.0 - k / i
    return 1.0 - ratio


def _check_beta(a: float, b: float) -> None:
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(f"Beta parameters must be finite and > 0, got a={a!r}, b={b!r}")


def beta_expected_pass_at_k(a: float, b: float, k: int) -> float:
    """``E[1 - (1-p)^k]`` for ``p ~ Beta(a, b)``."""
    _check_beta(a, b)
    check_positive_int("k", k, minimum=1)
    miss = 1.0
    for i in range(k):
        miss *= (b + i) / (a + b + i)
    return 1.0 - miss


def beta_expected_variance(a: float, b: float) -> float:
    """``E[p(1-p)]`` for ``p ~ Beta(a, b)``: the expected Bernoulli variance."""
    _check_beta(a, b)
    return a * b / ((a + b) * (a + b + 1.0))


def beta_expected_passk_slope(a: float, b: float, k: int) -> float:
    """``E[k p (1-p)^k]`` for ``p ~ Beta(a, b)``: d pass@k / d logit(p), in expectation."""
    _check_beta(a, b)
    check_positive_int("k", k, minimum=1)
    # E[p (1-p)^k] = B(a+1, b+k) / B(a, b) = a/(a+b) * prod_{i<k} (b+i)/(a+b+1+i)
    value = a / (a + b)
    for i in range(k):
        value *= (b + i) / (a + b + 1.0 + i)
    return k * value
