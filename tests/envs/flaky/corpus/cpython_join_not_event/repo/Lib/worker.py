import threading


class Worker:
    """Holds two resources while it works; releases them after signalling done."""

    def __init__(self):
        self.done = threading.Event()
        self.held = []
        self.total = 0

    def run(self):
        self.held.extend(["socket", "buffer"])
        self.total = sum(range(1000))
        self.done.set()
        for _ in range(20000):
            self.total += 1
        self.held.clear()
