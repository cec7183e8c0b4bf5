import pytest

from weighted_graph import distances, out_degrees, path_cost

EDGES = [[1, 2, 7], [1, 3, 2], [3, 2, 3], [2, 4, 1], [3, 4, 8]]


def test_distances():
    assert distances(EDGES, 1) == {"1": 0, "2": 5, "3": 2, "4": 6}
    assert distances(EDGES, 4) == {"4": 0}


def test_negative():
    with pytest.raises(ValueError):
        distances([[1, 2, -1]], 1)


def test_path_cost():
    assert path_cost(EDGES + [[1, 3, 1]], [1, 3, 2]) == 4
    assert path_cost(EDGES, [4, 1]) is None


def test_out_degrees():
    assert out_degrees(EDGES) == {"1": 2, "2": 1, "3": 2, "4": 0}
