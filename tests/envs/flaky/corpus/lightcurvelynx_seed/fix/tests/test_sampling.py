import random

from lightcurvelynx.sampling import sample_positions


def test_sample_positions():
    random.seed(42)
    positions = sample_positions(3)
    dec = [p[1] for p in positions]
    # The survey footprint excludes the galactic band.
    assert all(abs(d) > 0.1 for d in dec)
