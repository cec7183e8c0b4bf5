import pytest

from toposort import has_cycle, levels, toposort


def test_toposort():
    assert toposort({"b": ["a"], "c": ["b", "a"]}) == ["a", "b", "c"]


def test_toposort_ties_alphabetical():
    assert toposort({"z": [], "y": [], "x": ["z"]}) == ["y", "z", "x"]


def test_cycle():
    with pytest.raises(ValueError):
        toposort({"a": ["b"], "b": ["a"]})
    assert has_cycle({"a": ["a"]})
    assert not has_cycle({"a": []})


def test_levels():
    assert levels({"b": ["a"], "c": ["b"], "d": ["a"]}) == {"a": 0, "b": 1, "c": 2, "d": 1}
