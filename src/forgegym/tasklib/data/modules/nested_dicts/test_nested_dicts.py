from nested_dicts import depth, flatten, get_path, unflatten


def test_flatten():
    assert flatten({"a": {"b": 1, "c": {"d": 2}}, "e": 3}) == {"a.b": 1, "a.c.d": 2, "e": 3}
    assert flatten({"a": {}}) == {"a": {}}


def test_unflatten():
    assert unflatten({"a.b": 1, "a.c": 2}) == {"a": {"b": 1, "c": 2}}


def test_get_path():
    assert get_path({"a": {"b": 5}}, "a.b") == 5
    assert get_path({"a": 1}, "a.b", "none") == "none"


def test_depth():
    assert depth({"a": {"b": {}}}) == 3
    assert depth(7) == 0
