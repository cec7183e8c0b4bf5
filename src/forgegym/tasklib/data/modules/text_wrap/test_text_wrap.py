from text_wrap import center, truncate, wrap


def test_wrap_basic():
    assert wrap("the quick brown fox", 9) == ["the quick", "brown fox"]


def test_wrap_exact_width():
    assert wrap("ab cd ef", 5) == ["ab cd", "ef"]


def test_wrap_long_word():
    assert wrap("a verylongword b", 4) == ["a", "verylongword", "b"]


def test_center():
    assert center("ab", 5) == "*ab**"
    assert center("abc", 2) == "abc"


def test_truncate():
    assert truncate("hello world", 8) == "hello..."
    assert truncate("hi", 8) == "hi"
    assert truncate("hello", 2) == ".."
