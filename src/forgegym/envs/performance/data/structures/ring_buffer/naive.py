"""A fixed-capacity ring buffer."""


class RingBuffer:
    """Keeps the last ``capacity`` appended values, oldest first: appending to a full
    buffer overwrites the oldest value."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: list[int] = []

    def append(self, value: int) -> None:
        """Add ``value`` as the newest element."""
        items = self._items + [value]
        if len(items) > self.capacity:
            items = items[1:]
        self._items = items

    def pop_left(self) -> int | None:
        """Remove and return the oldest element (None when empty)."""
        if not self._items:
            return None
        value = self._items[0]
        self._items = self._items[1:]
        return value

    def get(self, index: int) -> int | None:
        """The ``index``-th oldest element (0 is the oldest), or None if out of range."""
        if not 0 <= index < len(self._items):
            return None
        return self._items[index]

    def size(self) -> int:
        """The number of elements held."""
        return len(self._items)
