import random
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class EventRecord:
    storage_id: int
    message: str


class EventLogStorage:
    """Stored events of one run (a database table upstream)."""

    def __init__(self, messages):
        self._records = [EventRecord(i, m) for i, m in enumerate(messages)]

    def get_records(self, after, limit):
        if random.random() < 0.15:
            time.sleep(0.01)  # a slow round trip to the database
        return [r for r in self._records if r.storage_id > after][:limit]


class EventLogSubscription:
    """Calls ``callback`` with every stored event, fetched in chunks by a watcher
    thread; ``on_done`` is called once everything was delivered."""

    def __init__(self, storage, callback, chunk_size=2, on_done=None):
        self._storage = storage
        self._callback = callback
        self._chunk_size = chunk_size
        self._on_done = on_done
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self):
        cursor = -1
        while True:
            chunk = self._storage.get_records(cursor, self._chunk_size)
            if not chunk:
                break
            for record in chunk:
                self._callback(record)
            cursor = chunk[-1].storage_id
        if self._on_done is not None:
            self._on_done()
