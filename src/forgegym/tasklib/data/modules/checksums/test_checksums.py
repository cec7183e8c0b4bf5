from checksums import isbn10_valid, luhn_digit, luhn_valid, mod_checksum


def test_luhn_valid():
    assert luhn_valid("4539 3195 0343 6467")
    assert not luhn_valid("8273 1232 7352 0569")
    assert not luhn_valid("0")


def test_luhn_digit():
    assert luhn_digit("7992739871") == 3


def test_isbn10():
    assert isbn10_valid("0-306-40615-2")
    assert isbn10_valid("0-8044-2957-X")
    assert not isbn10_valid("0-306-40615-3")


def test_mod_checksum():
    assert mod_checksum("abc") == 38
