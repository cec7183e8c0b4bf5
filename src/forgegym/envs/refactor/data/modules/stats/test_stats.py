import pytest

from stats import mean, median, percentile, std_dev


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_median_odd_and_even():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_std_dev():
    assert std_dev([2, 4, 4, 4, 5, 5, 7, 9]) == 2.0
    assert std_dev([1, 3], sample=True) == pytest.approx(1.4142135623730951)


def test_percentile_ends():
    assert percentile([5, 1, 3], 0) == 1
    assert percentile([5, 1, 3], 100) == 5
    assert percentile([1, 2, 3, 4, 5], 50) == 3
