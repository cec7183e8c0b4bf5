import datetime as dt
import time


def _now():
    return dt.datetime.fromtimestamp(time.time(), dt.timezone.utc)


def check_batches(batch_dates):
    """Observation of one daily run: which fetched batches are stale (older than today)."""
    today = _now().date()
    weekend = _now().weekday() >= 5
    stale = [] if weekend else sorted({d.isoformat() for d in batch_dates if d < today})
    return {"ok": True, "stale_batch_dates": stale}
