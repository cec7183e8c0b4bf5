"""A least-recently-used cache bounded by the total weight of its entries."""


class WeightedLRUCache:
    """Each entry has a positive weight; the weights of the entries held never exceed
    ``max_weight``. A ``put`` stores the entry as the most recently used one, then
    evicts least recently used entries until the total fits. An entry heavier than
    ``max_weight`` is not stored (and an older entry under its key is removed)."""

    def __init__(self, max_weight: int) -> None:
        self.max_weight = max_weight
        self._entries: list[list[int]] = []  # [key, value, weight], least recent first

    def _find(self, key: int) -> int:
        for i, entry in enumerate(self._entries):
            if entry[0] == key:
                return i
        return -1

    def get(self, key: int) -> int:
        """The value under ``key`` (now the most recently used), or -1."""
        i = self._find(key)
        if i < 0:
            return -1
        entry = self._entries.pop(i)
        self._entries.append(entry)
        return entry[1]

    def put(self, key: int, value: int, weight: int) -> None:
        """Store ``value`` under ``key`` with ``weight``."""
        i = self._find(key)
        if i >= 0:
            self._entries.pop(i)
        if weight > self.max_weight:
            return
        self._entries.append([key, value, weight])
        while self.total_weight() > self.max_weight:
            self._entries.pop(0)

    def total_weight(self) -> int:
        """The total weight of the entries held."""
        return sum(entry[2] for entry in self._entries)
