"""The k largest values of a stream."""

import heapq


class TopK:
    """Tracks the ``k`` largest values added so far (with repetitions)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self._heap: list[int] = []  # min-heap of the k largest

    def add(self, value: int) -> None:
        """Add ``value`` to the stream."""
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, value)
        elif value > self._heap[0]:
            heapq.heapreplace(self._heap, value)

    def kth(self) -> int | None:
        """The k-th largest value so far (None while fewer than k were added)."""
        return self._heap[0] if len(self._heap) == self.k else None

    def top(self) -> list[int]:
        """The up to k largest values, largest first."""
        return sorted(self._heap, reverse=True)
