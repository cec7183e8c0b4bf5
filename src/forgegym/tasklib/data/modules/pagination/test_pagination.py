import pytest

from pagination import page_count, page_items, page_window


def test_page_count():
    assert page_count(10, 3) == 4
    assert page_count(9, 3) == 3
    assert page_count(0, 5) == 1


def test_page_items():
    assert page_items(list(range(7)), 3, 3) == [6]
    assert page_items(list(range(7)), 1, 3) == [0, 1, 2]


def test_out_of_range():
    with pytest.raises(IndexError):
        page_items([1, 2], 2, 2)


def test_window():
    assert page_window(5, 10, 3) == [4, 5, 6]
    assert page_window(1, 10, 4) == [1, 2, 3, 4]
    assert page_window(10, 10, 4) == [7, 8, 9, 10]
