"""A first-in first-out queue that knows its minimum and maximum."""

from collections import deque


class MinMaxQueue:
    """A FIFO queue of ints with ``min()`` and ``max()`` of the elements it holds."""

    def __init__(self) -> None:
        self._items: deque[int] = deque()
        self._mins: deque[int] = deque()  # non-decreasing candidates
        self._maxs: deque[int] = deque()  # non-increasing candidates

    def push(self, value: int) -> None:
        """Add ``value`` at the back."""
        self._items.append(value)
        mins, maxs = self._mins, self._maxs
        while mins and mins[-1] > value:
            mins.pop()
        mins.append(value)
        while maxs and maxs[-1] < value:
            maxs.pop()
        maxs.append(value)

    def pop(self) -> int | None:
        """Remove and return the front element (None when empty)."""
        if not self._items:
            return None
        value = self._items.popleft()
        if self._mins[0] == value:
            self._mins.popleft()
        if self._maxs[0] == value:
            self._maxs.popleft()
        return value

    def min(self) -> int | None:
        """The smallest element held (None when empty)."""
        return self._mins[0] if self._mins else None

    def max(self) -> int | None:
        """The largest element held (None when empty)."""
        return self._maxs[0] if self._maxs else None
