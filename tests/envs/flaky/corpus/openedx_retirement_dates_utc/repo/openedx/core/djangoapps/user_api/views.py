import time
from datetime import date, datetime, timedelta, timezone


def retirements_by_status_and_date(retirements, status, days_back=0):
    """Retirements in ``status`` created on the day ``days_back`` days before today."""
    day = date.fromtimestamp(time.time()) - timedelta(days=days_back)
    return [
        r for r in retirements
        if r["status"] == status and r["created"].date() == day
    ]
