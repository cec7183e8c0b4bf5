import threading


class RequestQueueClient:
    """A request queue whose lock state reaches the replica after a lag."""

    def __init__(self, lag_s=0.001):
        self._lag_s = lag_s
        self._primary = set()
        self._replica = set()
        self._lock = threading.Lock()

    def list_and_lock_head(self, ids):
        with self._lock:
            self._primary |= set(ids)
        timer = threading.Timer(self._lag_s, self._replicate)
        timer.daemon = True
        timer.start()
        return sorted(ids)

    def _replicate(self):
        with self._lock:
            self._replica = set(self._primary)

    def list_head(self):
        with self._lock:
            return {"locked": sorted(self._replica)}

    def unlock_requests(self):
        """Unlock every locked request; the number unlocked (read from the replica)."""
        with self._lock:
            count = len(self._replica)
            self._primary.clear()
            self._replica = set()
        return count
