"""String utilities: palindromes, prefixes and word order."""


def is_palindrome(text):
    """Palindrome test over letters and digits, ignoring case."""
    chars = [c.lower() for c in text if c.isalnum()]
    i, j = 0, len(chars) - 1
    while i < j:
        if chars[i] != chars[j]:
            return False
        i += 1
        j -= 1
    return True


def common_prefix(words):
    """Longest common prefix of all ``words`` ("" for none)."""
    if not words:
        return ""
    prefix = words[0]
    for word in words[1:]:
        k = 0
        while k < len(prefix) and k < len(word) and prefix[k] == word[k]:
            k += 1
        prefix = prefix[:k]
    return prefix


def reverse_words(text):
    """Reverse word order, collapsing whitespace."""
    return " ".join(reversed(text.split()))


def longest_palindrome(text):
    """Longest palindromic substring (first one found when tied)."""
    best = ""
    for center in range(len(text)):
        for lo, hi in ((center, center), (center, center + 1)):
            while lo >= 0 and hi < len(text) and text[lo] == text[hi]:
                lo -= 1
                hi += 1
            if hi - lo - 1 > len(best):
                best = text[lo + 1 : hi]
    return best
