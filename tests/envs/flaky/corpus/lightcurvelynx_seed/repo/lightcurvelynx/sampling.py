import random


def sample_positions(n):
    """Draw n (ra, dec) positions uniformly; dec in [-1, 1] (sine of the declination)."""
    return [(random.uniform(0.0, 360.0), random.uniform(-1.0, 1.0)) for _ in range(n)]
