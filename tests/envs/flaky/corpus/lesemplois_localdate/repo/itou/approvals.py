import time
from datetime import date


def localdate():
    return date.fromtimestamp(time.time())


class Approval:
    def __init__(self, start_at, end_at):
        self.start_at = start_at
        self.end_at = end_at

    def is_valid(self):
        return self.start_at <= localdate() <= self.end_at
