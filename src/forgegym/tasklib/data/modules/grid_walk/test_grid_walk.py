import pytest

from grid_walk import count_paths, manhattan, neighbors, walk


def test_count_paths():
    assert count_paths(3, 3, []) == 6
    assert count_paths(3, 3, [[1, 1]]) == 2


def test_neighbors():
    assert neighbors(0, 0, 2, 2) == [[1, 0], [0, 1]]
    assert neighbors(1, 1, 3, 3) == [[0, 1], [2, 1], [1, 0], [1, 2]]


def test_walk():
    assert walk("UURDL") == [0, 1]


def test_walk_bad():
    with pytest.raises(ValueError):
        walk("UX")


def test_manhattan():
    assert manhattan([1, 2], [4, 0]) == 5
