"""A fixed-capacity ring buffer."""


class RingBuffer:
    """Keeps the last ``capacity`` appended values, oldest first: appending to a full
    buffer overwrites the oldest value."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._slots: list[int | None] = [None] * capacity
        self._start = 0
        self._size = 0

    def append(self, value: int) -> None:
        """Add ``value`` as the newest element."""
        end = (self._start + self._size) % self.capacity
        self._slots[end] = value
        if self._size == self.capacity:
            self._start = (self._start + 1) % self.capacity
        else:
            self._size += 1

    def pop_left(self) -> int | None:
        """Remove and return the oldest element (None when empty)."""
        if self._size == 0:
            return None
        value = self._slots[self._start]
        self._slots[self._start] = None
        self._start = (self._start + 1) % self.capacity
        self._size -= 1
        return value

    def get(self, index: int) -> int | None:
        """The ``index``-th oldest element (0 is the oldest), or None if out of range."""
        if not 0 <= index < self._size:
            return None
        return self._slots[(self._start + index) % self.capacity]

    def size(self) -> int:
        """The number of elements held."""
        return self._size
