def assert_greater_equal(first, second):
    if not first >= second:
        raise AssertionError(f"{first!r} not greater than or equal to {second!r}")
