import pytest

from matrix_ops import identity, matmul, spiral, trace, transpose


def test_transpose():
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]


def test_matmul():
    assert matmul([[1, 2], [3, 4]], [[5], [6]]) == [[17], [39]]


def test_matmul_mismatch():
    with pytest.raises(ValueError):
        matmul([[1, 2]], [[1, 2]])


def test_identity_trace():
    assert identity(2) == [[1, 0], [0, 1]]
    assert trace([[1, 2], [3, 4]]) == 5


def test_spiral():
    assert spiral([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == [1, 2, 3, 6, 9, 8, 7, 4, 5]
    assert spiral([[1, 2], [3, 4], [5, 6]]) == [1, 2, 4, 6, 5, 3]
