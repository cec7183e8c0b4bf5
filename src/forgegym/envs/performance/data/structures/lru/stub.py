"""A least-recently-used cache."""


class LRUCache:
    """Holds at most ``capacity`` entries; a ``put`` into a full cache evicts the entry
    used least recently (``get`` and ``put`` both count as a use)."""

    def __init__(self, capacity: int) -> None:
        raise NotImplementedError

    def get(self, key: int) -> int:
        """The value stored under ``key``, or -1 when absent."""
        raise NotImplementedError

    def put(self, key: int, value: int) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry if full."""
        raise NotImplementedError
