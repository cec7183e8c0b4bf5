"""A cache whose entries expire, with an injected clock."""

from collections import OrderedDict


class TTLCache:
    """Holds at most ``capacity`` live entries; an entry put at time t lives while
    ``clock() < t + ttl``. A ``put`` of a new key into a full cache first drops expired
    entries, then evicts the entry that expires first. ``get`` does not extend a life;
    a ``put`` on an existing key replaces its value and restarts its life."""

    def __init__(self, capacity: int, ttl: int, clock) -> None:
        self.capacity = capacity
        self.ttl = ttl
        self.clock = clock
        self._data: OrderedDict[int, tuple[int, int]] = OrderedDict()  # key -> (expiry, value)

    def _purge(self, now: int) -> None:
        data = self._data
        while data:
            key, (expiry, _) = next(iter(data.items()))
            if expiry > now:
                break
            data.popitem(last=False)

    def get(self, key: int) -> int:
        """The live value under ``key``, or -1."""
        now = self.clock()
        self._purge(now)
        entry = self._data.get(key)
        return -1 if entry is None else entry[1]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key`` for ``ttl`` ticks."""
        now = self.clock()
        self._purge(now)
        data = self._data
        if key in data:
            del data[key]
        elif len(data) >= self.capacity:
            data.popitem(last=False)
        data[key] = (now + self.ttl, value)

    def size(self) -> int:
        """The number of live entries."""
        self._purge(self.clock())
        return len(self._data)
