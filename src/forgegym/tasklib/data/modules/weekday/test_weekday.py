from weekday import days_until, is_weekend, weekday, weekday_name


def test_known_dates():
    assert weekday(2024, 1, 1) == 0
    assert weekday(2000, 2, 29) == 1


def test_name():
    assert weekday_name(1969, 7, 20) == "Sunday"


def test_weekend():
    assert is_weekend(2024, 6, 8)
    assert not is_weekend(2024, 6, 7)


def test_days_until():
    assert days_until(5, 0) == 2
    assert days_until(3, 3) == 0
