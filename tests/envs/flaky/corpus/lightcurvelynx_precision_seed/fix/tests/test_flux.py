import math
import random

from lightcurvelynx.flux import flux_to_mag, mag_to_flux


def test_flux_roundtrip():
    random.seed(7)
    fluxes = [random.uniform(1e-3, 1e6) for _ in range(2)]
    back = [mag_to_flux(flux_to_mag(f)) for f in fluxes]
    assert all(math.isclose(a, b, rel_tol=2e-15) for a, b in zip(fluxes, back))
