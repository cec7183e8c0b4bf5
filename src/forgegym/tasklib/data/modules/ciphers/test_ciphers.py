import pytest

from ciphers import atbash, caesar, vigenere


def test_caesar():
    assert caesar("Hello, Zz!", 3) == "Khoor, Cc!"
    assert caesar(caesar("abc", 5), -5) == "abc"


def test_vigenere():
    assert vigenere("attack at dawn", "LEMON") == "lxfopv ef rnhr"
    assert vigenere("lxfopv ef rnhr", "lemon", decrypt=True) == "attack at dawn"


def test_bad_key():
    with pytest.raises(ValueError):
        vigenere("x", "k3y")


def test_atbash():
    assert atbash("Abz!") == "Zya!"
