"""Prefix sums over an array that changes."""


class RangeSum:
    """An array of ``n`` ints, initially zero, with point updates and range sums."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._tree = [0] * (n + 1)  # Fenwick tree, 1-based
        self._values = [0] * n

    def _add(self, index: int, delta: int) -> None:
        i = index + 1
        tree, n = self._tree, self.n
        while i <= n:
            tree[i] += delta
            i += i & -i

    def _prefix(self, end: int) -> int:
        total = 0
        tree = self._tree
        i = end
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def add(self, index: int, delta: int) -> None:
        """Add ``delta`` to element ``index``."""
        self._values[index] += delta
        self._add(index, delta)

    def set(self, index: int, value: int) -> None:
        """Set element ``index`` to ``value``."""
        delta = value - self._values[index]
        self._values[index] = value
        self._add(index, delta)

    def query(self, start: int, stop: int) -> int:
        """The sum of elements ``start`` .. ``stop - 1``."""
        return self._prefix(stop) - self._prefix(start)
