from group_iter import group_consecutive, interleave, partition, take_while_increasing


def test_group_consecutive():
    assert group_consecutive([1, 1, 2, 1]) == [[1, 1], [2], [1]]


def test_take_while_increasing():
    assert take_while_increasing([1, 3, 5, 5, 7]) == [1, 3, 5]
    assert take_while_increasing([]) == []


def test_interleave():
    assert interleave([1, 2, 3], ["a"]) == [1, "a", 2, 3]


def test_partition():
    assert partition([5, 1, 7, 3], 4) == [[1, 3], [5, 7]]
