import random
import threading
import time


def _transform(item):
    if random.random() < 0.2:
        time.sleep(0.01)  # a cold read from disk
    if item is None:
        raise ValueError("invalid")
    return sum(range(item * 200))


class Producer:
    """Transforms items in a worker thread; an exception is logged, not raised."""

    def __init__(self, items, log):
        self._items = list(items)
        self._log = log
        self.results = []

    def _produce(self):
        for index, item in enumerate(self._items):
            try:
                self.results.append(_transform(item))
            except ValueError:
                self._log.append(f"producer failed: item {index} is invalid")
                return

    def consume(self, join_timeout=0.002):
        """Run the producer and wait for it at most ``join_timeout`` seconds
        (``None``: until it ends); returns what it produced so far."""
        thread = threading.Thread(target=self._produce, daemon=True)
        thread.start()
        thread.join(join_timeout)
        return list(self.results)
