"""A priority queue of keys with decrease-key."""


class IndexedHeap:
    """Keys (ints) with priorities (ints). ``pop`` and ``peek`` give the key of the
    smallest priority, ties broken by the smaller key, as ``[key, priority]``."""

    def __init__(self) -> None:
        self._priority: dict[int, int] = {}

    def push(self, key: int, priority: int) -> bool:
        """Insert ``key``; False (and no change) if it is already present."""
        if key in self._priority:
            return False
        self._priority[key] = priority
        return True

    def decrease(self, key: int, priority: int) -> bool:
        """Lower the priority of ``key`` to ``priority``; False if ``key`` is absent or
        ``priority`` is not lower than its current one."""
        current = self._priority.get(key)
        if current is None or priority >= current:
            return False
        self._priority[key] = priority
        return True

    def _minimum(self) -> int | None:
        best = None
        for key, priority in self._priority.items():
            if best is None or (priority, key) < (self._priority[best], best):
                best = key
        return best

    def pop(self) -> list[int] | None:
        """Remove and return ``[key, priority]`` of the minimum (None when empty)."""
        key = self._minimum()
        if key is None:
            return None
        return [key, self._priority.pop(key)]

    def peek(self) -> list[int] | None:
        """``[key, priority]`` of the minimum without removing it (None when empty)."""
        key = self._minimum()
        return None if key is None else [key, self._priority[key]]

    def size(self) -> int:
        """The number of keys held."""
        return len(self._priority)
