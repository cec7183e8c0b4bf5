import pytest

from range_fmt import count, expand, summarize


def test_summarize():
    assert summarize([5, 1, 2, 3, 7, 8, 8]) == "1-3,5,7-8"
    assert summarize([]) == ""


def test_expand():
    assert expand("1-3, 5,7-8") == [1, 2, 3, 5, 7, 8]
    assert expand("-2-1") == [-2, -1, 0, 1]


def test_bad_range():
    with pytest.raises(ValueError):
        expand("5-3")


def test_count():
    assert count("1-10,12") == 11
