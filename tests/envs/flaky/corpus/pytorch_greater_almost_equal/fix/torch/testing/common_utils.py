import math


def assert_greater_equal(first, second):
    if not first >= second:
        raise AssertionError(f"{first!r} not greater than or equal to {second!r}")


def assert_greater_almost_equal(first, second, places=7):
    """first >= second, where 'equal' means equal to ``places`` decimal places."""
    if first >= second or math.isclose(round(first - second, places), 0.0):
        return
    raise AssertionError(f"{first!r} not greater than or almost equal to {second!r}")
