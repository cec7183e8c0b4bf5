from graph_paths import adjacency, components, reachable, shortest_path

EDGES = [[1, 2], [2, 3], [3, 4], [1, 5], [5, 4], [6, 7]]


def test_adjacency():
    assert adjacency([[1, 2], [1, 3], [2, 1]]) == {1: [2, 3], 2: [1], 3: [1]}


def test_shortest_path():
    assert shortest_path(EDGES, 1, 4) == [1, 5, 4]
    assert shortest_path(EDGES, 1, 1) == [1]


def test_no_path():
    assert shortest_path(EDGES, 1, 7) is None


def test_reachable():
    assert reachable(EDGES, 3) == [1, 2, 3, 4, 5]


def test_components():
    assert components(EDGES) == 2
