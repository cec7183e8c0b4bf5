import time
from datetime import datetime, timedelta, timezone


class Predbat:
    """The battery predictor's clock: local midnight of its own time zone."""

    def __init__(self, tz_hours=1):
        tz = timezone(timedelta(hours=tz_hours))
        local = datetime.fromtimestamp(time.time(), timezone.utc).astimezone(tz)
        self.midnight_utc = local.replace(hour=0, minute=0, second=0, microsecond=0)

    def minute_rates(self, published):
        """``{minutes since midnight_utc: price}`` of rates published as
        ``{"YYYY-MM-DDTHH:MM": price}`` in the predictor's zone."""
        rates = {}
        for stamp, price in published.items():
            at = datetime.fromisoformat(stamp).replace(tzinfo=self.midnight_utc.tzinfo)
            rates[int((at - self.midnight_utc).total_seconds() // 60)] = price
        return rates
