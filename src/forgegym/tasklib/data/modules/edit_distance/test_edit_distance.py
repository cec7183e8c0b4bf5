import pytest

from edit_distance import closest, hamming, lcs_length, levenshtein


def test_levenshtein():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3


def test_hamming():
    assert hamming("karolin", "kathrin") == 3


def test_hamming_lengths():
    with pytest.raises(ValueError):
        hamming("a", "ab")


def test_closest():
    assert closest("appel", ["apple", "ample", "apply"]) == "apple"
    assert closest("x", []) is None


def test_lcs():
    assert lcs_length("ABCBDAB", "BDCABA") == 4
