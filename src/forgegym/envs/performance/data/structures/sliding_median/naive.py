"""The median of a sliding window."""


class SlidingMedian:
    """``add(x)`` appends ``x`` and returns the median of the last ``window`` values
    added (all of them while fewer have been added), as a float: the middle value, or
    the mean of the two middle values."""

    def __init__(self, window: int) -> None:
        self.window = window
        self._values: list[int] = []

    def add(self, value: int) -> float:
        """Add ``value``; return the median of the window."""
        self._values.append(value)
        if len(self._values) > self.window:
            self._values.pop(0)
        ordered = sorted(self._values)
        mid = len(ordered) // 2
        if len(ordered) % 2:
            return float(ordered[mid])
        return (ordered[mid - 1] + ordered[mid]) / 2
