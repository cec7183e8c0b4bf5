import datetime as dt
import time


def _now():
    return dt.datetime.fromtimestamp(time.time(), dt.timezone.utc)


def next_delivery_date(frequency, start_date):
    """Next delivery strictly after now: daily at start_date's time, or weekly on
    start_date's weekday."""
    now = _now()
    candidate = now.replace(hour=start_date.hour, minute=start_date.minute, second=0,
                            microsecond=0)
    if candidate <= now:
        candidate += dt.timedelta(days=1)
    if frequency == "weekly":
        while candidate.weekday() != start_date.weekday():
            candidate += dt.timedelta(days=1)
    return candidate
