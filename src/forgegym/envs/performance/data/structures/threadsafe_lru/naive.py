"""A least-recently-used cache safe to share between threads."""

import threading


class ThreadSafeLRUCache:
    """An LRU cache of at most ``capacity`` entries whose ``get`` and ``put`` may be
    called from several threads at once: each call acts atomically."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: list[tuple[int, int]] = []  # (key, value), least recent first
        self._lock = threading.Lock()

    def _index(self, key: int) -> int:
        for i, (k, _) in enumerate(self._items):
            if k == key:
                return i
        return -1

    def get(self, key: int) -> int:
        """The value stored under ``key``, or -1 when absent."""
        with self._lock:
            i = self._index(key)
            if i < 0:
                return -1
            item = self._items.pop(i)
            self._items.append(item)
            return item[1]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry if full."""
        with self._lock:
            i = self._index(key)
            if i >= 0:
                self._items.pop(i)
            elif len(self._items) >= self.capacity:
                self._items.pop(0)
            self._items.append((key, value))
