import pytest

from stats import mean, median, mode, value_range, variance


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_median():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_mode():
    assert mode([1, 2, 2, 3, 3]) == 2


def test_variance():
    assert variance([1, 1, 1]) == 0
    assert variance([1, 3]) == 1


def test_range():
    assert value_range([5, -2, 7]) == 9
