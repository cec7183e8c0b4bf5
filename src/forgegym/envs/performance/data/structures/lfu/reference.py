"""A least-frequently-used cache."""

from collections import OrderedDict, defaultdict


class LFUCache:
    """Holds at most ``capacity`` entries. A ``put`` of a new key into a full cache
    evicts the entry used least often; among those, the one used least recently.
    ``get`` (hit) and ``put`` each count as one use."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._values: dict[int, int] = {}
        self._counts: dict[int, int] = {}
        self._buckets: defaultdict[int, OrderedDict[int, None]] = defaultdict(OrderedDict)
        self._min = 0

    def _touch(self, key: int) -> None:
        count = self._counts[key]
        bucket = self._buckets[count]
        del bucket[key]
        if not bucket:
            del self._buckets[count]
            if self._min == count:
                self._min = count + 1
        self._counts[key] = count + 1
        self._buckets[count + 1][key] = None

    def get(self, key: int) -> int:
        """The value stored under ``key``, or -1 when absent."""
        if key not in self._values:
            return -1
        self._touch(key)
        return self._values[key]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key``, evicting the least frequently used entry if full."""
        if self.capacity <= 0:
            return
        if key in self._values:
            self._values[key] = value
            self._touch(key)
            return
        if len(self._values) >= self.capacity:
            bucket = self._buckets[self._min]
            evicted, _ = bucket.popitem(last=False)
            if not bucket:
                del self._buckets[self._min]
            del self._values[evicted]
            del self._counts[evicted]
        self._values[key] = value
        self._counts[key] = 1
        self._buckets[1][key] = None
        self._min = 1
