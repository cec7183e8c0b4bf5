"""A least-frequently-used cache."""


class LFUCache:
    """Holds at most ``capacity`` entries. A ``put`` of a new key into a full cache
    evicts the entry used least often; among those, the one used least recently.
    ``get`` (hit) and ``put`` each count as one use."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: dict[int, list[int]] = {}  # key -> [value, count, last use]
        self._clock = 0

    def get(self, key: int) -> int:
        """The value stored under ``key``, or -1 when absent."""
        entry = self._entries.get(key)
        if entry is None:
            return -1
        self._clock += 1
        entry[1] += 1
        entry[2] = self._clock
        return entry[0]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key``, evicting the least frequently used entry if full."""
        if self.capacity <= 0:
            return
        self._clock += 1
        entry = self._entries.get(key)
        if entry is not None:
            entry[0] = value
            entry[1] += 1
            entry[2] = self._clock
            return
        if len(self._entries) >= self.capacity:
            victim = None
            best = None
            for k, (_, count, last) in self._entries.items():
                if best is None or (count, last) < best:
                    best = (count, last)
                    victim = k
            del self._entries[victim]
        self._entries[key] = [value, 1, self._clock]
