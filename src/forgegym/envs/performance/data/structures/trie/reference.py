"""A set of words with prefix counts."""


class Trie:
    """A set of lowercase words: insert, remove, membership and the number of stored
    words that start with a prefix (the empty prefix counts every word)."""

    def __init__(self) -> None:
        self._root: dict = {"#": 0}  # "#": words below this node; "$": word ends here

    def insert(self, word: str) -> bool:
        """Add ``word``; False if it was already stored."""
        if self.contains(word):
            return False
        node = self._root
        node["#"] += 1
        for ch in word:
            node = node.setdefault(ch, {"#": 0})
            node["#"] += 1
        node["$"] = True
        return True

    def remove(self, word: str) -> bool:
        """Remove ``word``; False if it was not stored."""
        if not self.contains(word):
            return False
        node = self._root
        node["#"] -= 1
        for ch in word:
            child = node[ch]
            child["#"] -= 1
            if child["#"] == 0:
                del node[ch]
                return True
            node = child
        del node["$"]
        return True

    def _node(self, prefix: str) -> dict | None:
        node = self._root
        for ch in prefix:
            node = node.get(ch)
            if node is None:
                return None
        return node

    def contains(self, word: str) -> bool:
        """Whether ``word`` is stored."""
        node = self._node(word)
        return node is not None and "$" in node

    def count_prefix(self, prefix: str) -> int:
        """How many stored words start with ``prefix``."""
        node = self._node(prefix)
        return 0 if node is None else node["#"]
