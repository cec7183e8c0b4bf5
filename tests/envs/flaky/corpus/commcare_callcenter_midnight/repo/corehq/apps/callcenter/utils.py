import time
from datetime import datetime, timedelta, timezone
from datetime import time as dtime


def domain_midnights(tz_offset_hours, days=2):
    """The last ``days`` midnights of a domain ``tz_offset_hours`` from UTC, as naive
    UTC datetimes, newest first."""
    now = datetime.fromtimestamp(time.time(), timezone.utc).replace(tzinfo=None)
    local_today = (now + timedelta(hours=tz_offset_hours)).date()
    midnight = datetime.combine(local_today, dtime()) - timedelta(hours=tz_offset_hours)
    return [midnight - timedelta(days=i) for i in range(days)]
