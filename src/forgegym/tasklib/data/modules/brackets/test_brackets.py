from brackets import first_error, is_balanced, max_depth


def test_balanced():
    assert is_balanced("a(b[c]{d})")
    assert not is_balanced("(]")
    assert not is_balanced("((")


def test_max_depth():
    assert max_depth("(a(b)(c(d)))") == 3
    assert max_depth("abc") == 0


def test_first_error():
    assert first_error("(a]") == 2
    assert first_error("((x)") == 0
    assert first_error("()") == -1
