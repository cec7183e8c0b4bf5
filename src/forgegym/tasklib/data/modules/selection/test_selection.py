import pytest

from selection import argmax, kth_smallest, second_largest, top_n


def test_kth():
    assert kth_smallest([7, 1, 5, 3, 3], 3) == 3
    assert kth_smallest([7, 1, 5, 3, 3], 5) == 7


def test_kth_range():
    with pytest.raises(IndexError):
        kth_smallest([1], 2)


def test_top_n():
    assert top_n([4, 9, 1, 9], 2) == [9, 9]


def test_second_largest():
    assert second_largest([3, 9, 9, 5]) == 5
    assert second_largest([2, 2]) is None


def test_argmax():
    assert argmax([1, 5, 5, 2]) == 1
    assert argmax([]) == -1
