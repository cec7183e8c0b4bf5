"""A least-recently-used cache bounded by the total weight of its entries."""

from collections import OrderedDict


class WeightedLRUCache:
    """Each entry has a positive weight; the weights of the entries held never exceed
    ``max_weight``. A ``put`` stores the entry as the most recently used one, then
    evicts least recently used entries until the total fits. An entry heavier than
    ``max_weight`` is not stored (and an older entry under its key is removed)."""

    def __init__(self, max_weight: int) -> None:
        self.max_weight = max_weight
        self._data: OrderedDict[int, tuple[int, int]] = OrderedDict()  # key -> (value, weight)
        self._total = 0

    def get(self, key: int) -> int:
        """The value under ``key`` (now the most recently used), or -1."""
        entry = self._data.get(key)
        if entry is None:
            return -1
        self._data.move_to_end(key)
        return entry[0]

    def put(self, key: int, value: int, weight: int) -> None:
        """Store ``value`` under ``key`` with ``weight``."""
        data = self._data
        old = data.pop(key, None)
        if old is not None:
            self._total -= old[1]
        if weight > self.max_weight:
            return
        data[key] = (value, weight)
        self._total += weight
        while self._total > self.max_weight:
            _, (_, w) = data.popitem(last=False)
            self._total -= w

    def total_weight(self) -> int:
        """The total weight of the entries held."""
        return self._total
