import random


class Coordinator:
    """Refreshes zone temperatures and keeps an exponential moving average."""

    def __init__(self, tau_s=600.0):
        self.tau_s = tau_s
        self.ema_temp = None

    def _elapsed(self):
        return random.uniform(5.0, 120.0)  # time since the previous refresh

    def async_refresh(self, reading):
        if self.ema_temp is None:
            self.ema_temp = reading
            return
        dt = self._elapsed()
        alpha = dt / (self.tau_s + dt)
        self.ema_temp = alpha * reading + (1 - alpha) * self.ema_temp

    def save_state(self):
        return {"ema_temp": self.ema_temp}
