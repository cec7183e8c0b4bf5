"""A token-bucket rate limiter per client, with an injected clock."""


class RateLimiter:
    """Each client has a bucket of at most ``burst`` tokens, full at its first request,
    refilled by ``rate`` tokens per clock tick. ``allow(client, cost)`` refills the
    bucket for the time elapsed since the client's last call, then takes ``cost``
    tokens if there are enough (True) or takes none (False)."""

    def __init__(self, rate: int, burst: int, clock) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: list[list] = []  # [client, tokens, last tick]

    def _refill(self, client: str) -> list:
        now = self.clock()
        for bucket in self._buckets:
            if bucket[0] == client:
                bucket[1] = min(self.burst, bucket[1] + (now - bucket[2]) * self.rate)
                bucket[2] = now
                return bucket
        bucket = [client, self.burst, now]
        self._buckets.append(bucket)
        return bucket

    def allow(self, client: str, cost: int) -> bool:
        """Take ``cost`` tokens from ``client``'s bucket if it holds enough."""
        bucket = self._refill(client)
        if bucket[1] >= cost:
            bucket[1] -= cost
            return True
        return False

    def tokens(self, client: str) -> int:
        """The tokens ``client`` holds now."""
        return self._refill(client)[1]
