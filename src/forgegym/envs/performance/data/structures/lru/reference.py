"""A least-recently-used cache."""

from collections import OrderedDict


class LRUCache:
    """Holds at most ``capacity`` entries; a ``put`` into a full cache evicts the entry
    used least recently (``get`` and ``put`` both count as a use)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[int, int] = OrderedDict()

    def get(self, key: int) -> int:
        """The value stored under ``key``, or -1 when absent."""
        data = self._data
        if key not in data:
            return -1
        data.move_to_end(key)
        return data[key]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry if full."""
        data = self._data
        if key in data:
            data.move_to_end(key)
        elif len(data) >= self.capacity:
            data.popitem(last=False)
        data[key] = value
