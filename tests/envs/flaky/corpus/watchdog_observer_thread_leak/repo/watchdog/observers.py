import threading


class Observer(threading.Thread):
    def __init__(self, timeout=0.01):
        super().__init__(daemon=True)
        self.timeout = timeout
        self._stopped = threading.Event()
        self.handlers = []

    def schedule(self, handler):
        self.handlers.append(handler)

    def run(self):
        while not self._stopped.wait(self.timeout):
            for handler in self.handlers:
                handler()

    def stop(self):
        self._stopped.set()
