from intervals import contains, merge, overlaps, total_length


def test_merge_overlapping():
    assert merge([[1, 3], [2, 6], [8, 10]]) == [[1, 6], [8, 10]]


def test_merge_touching():
    assert merge([[5, 7], [1, 5]]) == [[1, 7]]


def test_overlaps():
    assert overlaps([1, 3], [3, 5])
    assert not overlaps([1, 2], [3, 4])


def test_total_length():
    assert total_length([[1, 3], [2, 4], [10, 10]]) == 5


def test_contains():
    assert contains([[1, 2], [5, 9]], 9)
    assert not contains([[1, 2], [5, 9]], 3)
