from palindromes import common_prefix, is_palindrome, longest_palindrome, reverse_words


def test_is_palindrome():
    assert is_palindrome("A man, a plan, a canal: Panama")
    assert not is_palindrome("abca")


def test_common_prefix():
    assert common_prefix(["flower", "flow", "flight"]) == "fl"
    assert common_prefix([]) == ""


def test_reverse_words():
    assert reverse_words("  the sky  is blue ") == "blue is sky the"


def test_longest_palindrome():
    assert longest_palindrome("babad") == "bab"
    assert longest_palindrome("cbbd") == "bb"
