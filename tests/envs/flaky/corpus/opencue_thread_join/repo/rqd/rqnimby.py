import threading
import time


class Nimby(threading.Thread):
    """Watches user input devices and locks the host for rendering while someone is active."""

    def __init__(self, rqCore):
        threading.Thread.__init__(self)
        self.daemon = True
        self.rqCore = rqCore
        self.locked = False
        self.active = False
        self.fileObjList = []
        self.devices = ["event0", "mouse0"]

    def openEvents(self):
        """Opens the input devices to watch (here: those the config lists)."""
        self.fileObjList = [name for name in self.devices if name.startswith("event")]

    def unlockedIdle(self):
        """Waits for input events while unlocked (select() on the devices)."""
        self.active = False

    def run(self):
        self.active = True
        self.startTime = time.time()
        self.openEvents()
        self.unlockedIdle()

    def stop(self):
        self.active = False
