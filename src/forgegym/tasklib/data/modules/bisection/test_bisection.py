from bisection import bisect_left, bisect_right, count_in_range, find


def test_bisect_left():
    assert bisect_left([1, 2, 2, 3], 2) == 1
    assert bisect_left([], 5) == 0


def test_bisect_right():
    assert bisect_right([1, 2, 2, 3], 2) == 3


def test_find():
    assert find([1, 3, 5, 7], 7) == 3
    assert find([1, 3, 5, 7], 4) == -1


def test_count_in_range():
    assert count_in_range([1, 2, 2, 3, 5, 8], 2, 5) == 4
