import random


def sample_fraction(rows, fraction, seed=None):
    """Each row kept with probability ``fraction`` (``seed``: a reproducible draw;
    ``None``: the process RNG)."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError("fraction must be within [0, 1]")
    rng = random.Random(seed) if seed is not None else random
    return [row for row in rows if rng.random() < fraction]
