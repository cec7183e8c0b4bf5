"""Prefix sums over an array that changes."""


class RangeSum:
    """An array of ``n`` ints, initially zero, with point updates and range sums."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._values = [0] * n

    def add(self, index: int, delta: int) -> None:
        """Add ``delta`` to element ``index``."""
        self._values[index] += delta

    def set(self, index: int, value: int) -> None:
        """Set element ``index`` to ``value``."""
        self._values[index] = value

    def query(self, start: int, stop: int) -> int:
        """The sum of elements ``start`` .. ``stop - 1``."""
        total = 0
        for i in range(start, stop):
            total += self._values[i]
        return total
