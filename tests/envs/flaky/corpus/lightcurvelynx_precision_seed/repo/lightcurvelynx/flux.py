import math


def flux_to_mag(flux, zp=31.4):
    return zp - 2.5 * math.log10(flux)


def mag_to_flux(mag, zp=31.4):
    return 10 ** ((zp - mag) / 2.5)
