"""A least-recently-used cache safe to share between threads."""

import threading
from collections import OrderedDict


class ThreadSafeLRUCache:
    """An LRU cache of at most ``capacity`` entries whose ``get`` and ``put`` may be
    called from several threads at once: each call acts atomically."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[int, int] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: int) -> int:
        """The value stored under ``key``, or -1 when absent."""
        with self._lock:
            data = self._data
            if key not in data:
                return -1
            data.move_to_end(key)
            return data[key]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry if full."""
        with self._lock:
            data = self._data
            if key in data:
                data.move_to_end(key)
            elif len(data) >= self.capacity:
                data.popitem(last=False)
            data[key] = value
