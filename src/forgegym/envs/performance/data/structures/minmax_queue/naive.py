"""A first-in first-out queue that knows its minimum and maximum."""

from collections import deque


class MinMaxQueue:
    """A FIFO queue of ints with ``min()`` and ``max()`` of the elements it holds."""

    def __init__(self) -> None:
        self._items: deque[int] = deque()

    def push(self, value: int) -> None:
        """Add ``value`` at the back."""
        self._items.append(value)

    def pop(self) -> int | None:
        """Remove and return the front element (None when empty)."""
        if not self._items:
            return None
        return self._items.popleft()

    def min(self) -> int | None:
        """The smallest element held (None when empty)."""
        best = None
        for value in self._items:
            if best is None or value < best:
                best = value
        return best

    def max(self) -> int | None:
        """The largest element held (None when empty)."""
        best = None
        for value in self._items:
            if best is None or value > best:
                best = value
        return best
