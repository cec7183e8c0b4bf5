from dedupe import compact, duplicates, first_repeat_index, unique


def test_unique():
    assert unique([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_duplicates():
    assert duplicates([1, 2, 1, 3, 2, 1]) == [1, 2]


def test_first_repeat_index():
    assert first_repeat_index([5, 6, 7, 6]) == 3
    assert first_repeat_index([1, 2]) == -1


def test_compact():
    assert compact([1, 1, 2, 2, 1]) == [1, 2, 1]
