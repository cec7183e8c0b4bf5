"""The k largest values of a stream."""


class TopK:
    """Tracks the ``k`` largest values added so far (with repetitions)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self._values: list[int] = []

    def add(self, value: int) -> None:
        """Add ``value`` to the stream."""
        self._values.append(value)

    def kth(self) -> int | None:
        """The k-th largest value so far (None while fewer than k were added)."""
        if len(self._values) < self.k:
            return None
        return sorted(self._values, reverse=True)[self.k - 1]

    def top(self) -> list[int]:
        """The up to k largest values, largest first."""
        return sorted(self._values, reverse=True)[: self.k]
