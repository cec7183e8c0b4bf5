import threading


class AtomicInteger:
    def __init__(self, value=0):
        self._value = value
        self._lock = threading.Lock()

    def get(self):
        with self._lock:
            return self._value

    def get_and_set(self, value):
        with self._lock:
            old, self._value = self._value, value
            return old
