from rotation import is_rotation, min_rotation, rotate_left, rotate_right


def test_rotate_left():
    assert rotate_left([1, 2, 3, 4], 1) == [2, 3, 4, 1]
    assert rotate_left([1, 2, 3], 5) == [3, 1, 2]


def test_rotate_right():
    assert rotate_right([1, 2, 3, 4], 1) == [4, 1, 2, 3]
    assert rotate_right([], 3) == []


def test_is_rotation():
    assert is_rotation("waterbottle", "erbottlewat")
    assert not is_rotation("ab", "aba")


def test_min_rotation():
    assert min_rotation("cab") == "abc"
