"""A set of words with prefix counts."""


class Trie:
    """A set of lowercase words: insert, remove, membership and the number of stored
    words that start with a prefix (the empty prefix counts every word)."""

    def __init__(self) -> None:
        self._words: set[str] = set()

    def insert(self, word: str) -> bool:
        """Add ``word``; False if it was already stored."""
        if word in self._words:
            return False
        self._words.add(word)
        return True

    def remove(self, word: str) -> bool:
        """Remove ``word``; False if it was not stored."""
        if word not in self._words:
            return False
        self._words.remove(word)
        return True

    def contains(self, word: str) -> bool:
        """Whether ``word`` is stored."""
        return word in self._words

    def count_prefix(self, prefix: str) -> int:
        """How many stored words start with ``prefix``."""
        return sum(1 for word in self._words if word.startswith(prefix))
