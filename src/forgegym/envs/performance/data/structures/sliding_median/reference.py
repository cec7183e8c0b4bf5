"""The median of a sliding window."""

import heapq
from collections import defaultdict, deque


class SlidingMedian:
    """``add(x)`` appends ``x`` and returns the median of the last ``window`` values
    added (all of them while fewer have been added), as a float: the middle value, or
    the mean of the two middle values."""

    def __init__(self, window: int) -> None:
        self.window = window
        self._recent: deque[int] = deque()
        self._low: list[int] = []  # max-heap (negated): the smaller half
        self._high: list[int] = []  # min-heap: the larger half
        self._low_size = 0  # live sizes (heaps hold lazily deleted values too)
        self._high_size = 0
        self._dead: defaultdict[int, int] = defaultdict(int)

    def _prune(self, heap: list[int], negate: bool) -> None:
        while heap:
            value = -heap[0] if negate else heap[0]
            if self._dead[value]:
                self._dead[value] -= 1
                heapq.heappop(heap)
            else:
                break

    def _balance(self) -> None:
        if self._low_size > self._high_size + 1:
            heapq.heappush(self._high, -heapq.heappop(self._low))
            self._low_size -= 1
            self._high_size += 1
            self._prune(self._low, True)
        elif self._low_size < self._high_size:
            heapq.heappush(self._low, -heapq.heappop(self._high))
            self._high_size -= 1
            self._low_size += 1
            self._prune(self._high, False)

    def add(self, value: int) -> float:
        """Add ``value``; return the median of the window."""
        if self._low and value <= -self._low[0]:
            heapq.heappush(self._low, -value)
            self._low_size += 1
        else:
            heapq.heappush(self._high, value)
            self._high_size += 1
        self._recent.append(value)
        if len(self._recent) > self.window:
            old = self._recent.popleft()
            self._dead[old] += 1
            if self._low and old <= -self._low[0]:
                self._low_size -= 1
                if old == -self._low[0]:
                    self._prune(self._low, True)
            else:
                self._high_size -= 1
                if self._high and old == self._high[0]:
                    self._prune(self._high, False)
        self._balance()
        self._prune(self._low, True)
        self._prune(self._high, False)
        if self._low_size > self._high_size:
            return float(-self._low[0])
        return (-self._low[0] + self._high[0]) / 2
