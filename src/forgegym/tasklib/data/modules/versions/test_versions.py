import pytest

from versions import bump, compare, latest, parse


def test_parse():
    assert parse("1.10.2") == [1, 10, 2]


def test_parse_bad():
    with pytest.raises(ValueError):
        parse("1..2")


def test_compare():
    assert compare("1.2", "1.10") == -1
    assert compare("1.0.0", "1") == 0
    assert compare("2.0", "1.9.9") == 1


def test_bump():
    assert bump("1.2.3", "minor") == "1.3.0"
    assert bump("1", "patch") == "1.0.1"


def test_latest():
    assert latest(["1.2", "1.10", "1.9"]) == "1.10"
    assert latest([]) is None
