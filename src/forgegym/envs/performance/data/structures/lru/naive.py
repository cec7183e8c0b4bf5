"""A least-recently-used cache."""


class LRUCache:
    """Holds at most ``capacity`` entries; a ``put`` into a full cache evicts the entry
    used least recently (``get`` and ``put`` both count as a use)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._values: dict[int, int] = {}
        self._order: list[int] = []  # least recently used first

    def get(self, key: int) -> int:
        """The value stored under ``key``, or -1 when absent."""
        if key not in self._values:
            return -1
        self._order.remove(key)
        self._order.append(key)
        return self._values[key]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry if full."""
        if key in self._values:
            self._order.remove(key)
        elif len(self._order) >= self.capacity:
            oldest = self._order.pop(0)
            del self._values[oldest]
        self._order.append(key)
        self._values[key] = value
