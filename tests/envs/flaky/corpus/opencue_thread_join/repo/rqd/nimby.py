import threading


class Nimby(threading.Thread):
    """Watches user activity and locks the host for rendering when someone is active."""

    def __init__(self, rqCore, idle_seconds):
        super().__init__(daemon=True)
        self.rqCore = rqCore
        self.idle_seconds = idle_seconds
        self.locked = False

    def lockNimby(self):
        self.locked = True
        self.rqCore.onNimbyLock()

    def run(self):
        # Collect the activity samples before deciding (the real daemon reads /proc).
        samples = [sum(range(2000)) for _ in range(50)]
        if samples and self.idle_seconds < 60:
            self.lockNimby()
