"""A priority queue of keys with decrease-key."""

import heapq


class IndexedHeap:
    """Keys (ints) with priorities (ints). ``pop`` and ``peek`` give the key of the
    smallest priority, ties broken by the smaller key, as ``[key, priority]``."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int]] = []  # (priority, key), possibly stale
        self._priority: dict[int, int] = {}

    def _clean(self) -> None:
        heap, priority = self._heap, self._priority
        while heap and priority.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)

    def push(self, key: int, priority: int) -> bool:
        """Insert ``key``; False (and no change) if it is already present."""
        if key in self._priority:
            return False
        self._priority[key] = priority
        heapq.heappush(self._heap, (priority, key))
        return True

    def decrease(self, key: int, priority: int) -> bool:
        """Lower the priority of ``key`` to ``priority``; False if ``key`` is absent or
        ``priority`` is not lower than its current one."""
        current = self._priority.get(key)
        if current is None or priority >= current:
            return False
        self._priority[key] = priority
        heapq.heappush(self._heap, (priority, key))
        return True

    def pop(self) -> list[int] | None:
        """Remove and return ``[key, priority]`` of the minimum (None when empty)."""
        self._clean()
        if not self._heap:
            return None
        priority, key = heapq.heappop(self._heap)
        del self._priority[key]
        return [key, priority]

    def peek(self) -> list[int] | None:
        """``[key, priority]`` of the minimum without removing it (None when empty)."""
        self._clean()
        if not self._heap:
            return None
        priority, key = self._heap[0]
        return [key, priority]

    def size(self) -> int:
        """The number of keys held."""
        return len(self._priority)
