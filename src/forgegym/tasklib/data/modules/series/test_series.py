import pytest

from series import cumulative, differences, longest_increasing_run, moving_average


def test_cumulative():
    assert cumulative([1, 2, 3]) == [1, 3, 6]


def test_differences():
    assert differences([1, 4, 9, 16]) == [3, 5, 7]


def test_moving_average():
    assert moving_average([1, 2, 3, 4, 5], 2) == [1.5, 2.5, 3.5, 4.5]
    assert moving_average([1, 2], 3) == []


def test_moving_average_bad_k():
    with pytest.raises(ValueError):
        moving_average([1], 0)


def test_longest_run():
    assert longest_increasing_run([1, 2, 2, 3, 4, 5, 1]) == 4
    assert longest_increasing_run([]) == 0
