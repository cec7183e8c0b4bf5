"""Anagram helpers."""


def signature(word):
    """Sorted lowercase letters of ``word`` (non-letters ignored)."""
    return "".join(sorted(c for c in word.lower() if c.isalpha()))


def is_anagram(a, b):
    """Whether ``a`` and ``b`` use the same letters (case and punctuation ignored)."""
    return signature(a) == signature(b)


def group_anagrams(words):
    """Groups of mutual anagrams: each group sorted, groups sorted by first word."""
    groups = {}
    for word in words:
        groups.setdefault(signature(word), []).append(word)
    return sorted(sorted(group) for group in groups.values())


def letter_counts(text):
    """Letter -> count for the lowercase letters of ``text``."""
    counts = {}
    for c in text.lower():
        if c.isalpha():
            counts[c] = counts.get(c, 0) + 1
    return counts
