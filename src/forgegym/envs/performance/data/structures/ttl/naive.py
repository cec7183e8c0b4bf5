"""A cache whose entries expire, with an injected clock."""


class TTLCache:
    """Holds at most ``capacity`` live entries; an entry put at time t lives while
    ``clock() < t + ttl``. A ``put`` of a new key into a full cache first drops expired
    entries, then evicts the entry that expires first. ``get`` does not extend a life;
    a ``put`` on an existing key replaces its value and restarts its life."""

    def __init__(self, capacity: int, ttl: int, clock) -> None:
        self.capacity = capacity
        self.ttl = ttl
        self.clock = clock
        self._data: dict[int, tuple[int, int]] = {}  # key -> (expiry, value)

    def _purge(self, now: int) -> None:
        for key in [k for k, (expiry, _) in self._data.items() if expiry <= now]:
            del self._data[key]

    def get(self, key: int) -> int:
        """The live value under ``key``, or -1."""
        self._purge(self.clock())
        entry = self._data.get(key)
        return -1 if entry is None else entry[1]

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key`` for ``ttl`` ticks."""
        now = self.clock()
        self._purge(now)
        if key in self._data:
            del self._data[key]
        elif len(self._data) >= self.capacity:
            first = min(self._data, key=lambda k: self._data[k][0])
            del self._data[first]
        self._data[key] = (now + self.ttl, value)

    def size(self) -> int:
        """The number of live entries."""
        self._purge(self.clock())
        return len(self._data)
