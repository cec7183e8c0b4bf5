"""Disjoint sets over the elements 0 .. n-1."""


class UnionFind:
    """Starts with every element alone; ``union`` merges two sets."""

    def __init__(self, n: int) -> None:
        self._label = list(range(n))

    def union(self, a: int, b: int) -> bool:
        """Merge the sets of ``a`` and ``b``; True when they were different sets."""
        la, lb = self._label[a], self._label[b]
        if la == lb:
            return False
        for i, label in enumerate(self._label):
            if label == lb:
                self._label[i] = la
        return True

    def connected(self, a: int, b: int) -> bool:
        """Whether ``a`` and ``b`` are in the same set."""
        return self._label[a] == self._label[b]

    def size(self, a: int) -> int:
        """The number of elements in the set of ``a``."""
        return self._label.count(self._label[a])

    def count(self) -> int:
        """The number of sets."""
        return len(set(self._label))
