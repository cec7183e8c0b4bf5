import random
import threading
import time


class NoteScreen:
    """A note editor whose Save runs in a worker and may detect a version conflict."""

    def __init__(self, stored_version):
        self.stored_version = stored_version
        self.autosave_state = "idle"

    def save(self, version, text):
        self.autosave_state = "saving"
        worker = threading.Thread(target=self._save, args=(version, text), daemon=True)
        worker.start()
        return worker

    def _save(self, version, text):
        if random.random() < 0.5:
            time.sleep(0.2)  # the database write waits for a lock
        self.autosave_state = "conflict" if version != self.stored_version else "saved"
