"""Disjoint sets over the elements 0 .. n-1."""


class UnionFind:
    """Starts with every element alone; ``union`` merges two sets."""

    def __init__(self, n: int) -> None:
        self._parent = list(range(n))
        self._size = [1] * n
        self._count = n

    def _find(self, x: int) -> int:
        parent = self._parent
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: int, b: int) -> bool:
        """Merge the sets of ``a`` and ``b``; True when they were different sets."""
        ra, rb = self._find(a), self._find(b)
        if ra == rb:
            return False
        if self._size[ra] < self._size[rb]:
            ra, rb = rb, ra
        self._parent[rb] = ra
        self._size[ra] += self._size[rb]
        self._count -= 1
        return True

    def connected(self, a: int, b: int) -> bool:
        """Whether ``a`` and ``b`` are in the same set."""
        return self._find(a) == self._find(b)

    def size(self, a: int) -> int:
        """The number of elements in the set of ``a``."""
        return self._size[self._find(a)]

    def count(self) -> int:
        """The number of sets."""
        return self._count
