from merging import intersect_sorted, is_sorted, merge, merge_all


def test_merge():
    assert merge([1, 4, 6], [2, 3, 7, 8]) == [1, 2, 3, 4, 6, 7, 8]
    assert merge([], [1]) == [1]


def test_merge_all():
    assert merge_all([[3, 5], [1], [2, 4]]) == [1, 2, 3, 4, 5]


def test_is_sorted():
    assert is_sorted([1, 1, 2])
    assert not is_sorted([2, 1])


def test_intersect():
    assert intersect_sorted([1, 2, 2, 3], [2, 2, 4]) == [2, 2]
