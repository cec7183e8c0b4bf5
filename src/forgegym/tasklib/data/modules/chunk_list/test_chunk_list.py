import pytest

from chunk_list import chunk_list, flatten, pairwise, windows


def test_chunk_even():
    assert chunk_list([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_chunk_keeps_last_partial_chunk():
    assert chunk_list([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunk_bad_size():
    with pytest.raises(ValueError):
        chunk_list([1], 0)


def test_flatten_roundtrip():
    assert flatten(chunk_list(list(range(7)), 3)) == list(range(7))


def test_windows():
    assert windows([1, 2, 3, 4], 3) == [[1, 2, 3], [2, 3, 4]]
    assert windows([1, 2], 3) == []


def test_pairwise():
    assert pairwise([1, 2, 3]) == [[1, 2], [2, 3]]
    assert pairwise([1]) == []
