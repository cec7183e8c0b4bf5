from anagrams import group_anagrams, is_anagram, letter_counts, signature


def test_signature():
    assert signature("Dormitory!") == "dimoorrty"


def test_is_anagram():
    assert is_anagram("Listen", "Silent")
    assert not is_anagram("abc", "abd")


def test_group_anagrams():
    assert group_anagrams(["eat", "tea", "tan", "ate", "nat", "bat"]) == [
        ["ate", "eat", "tea"],
        ["bat"],
        ["nat", "tan"],
    ]


def test_letter_counts():
    assert letter_counts("Aab!") == {"a": 2, "b": 1}
