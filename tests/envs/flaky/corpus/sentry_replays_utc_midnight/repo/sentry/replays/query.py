import time
from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass(frozen=True)
class Replay:
    replay_id: str
    started_at: datetime


def _now():
    return datetime.fromtimestamp(time.time(), timezone.utc)


def replays_today(replays):
    """The replays that started on the current UTC day, oldest first."""
    today = _now().date()
    return sorted(
        (r for r in replays if r.started_at.date() == today), key=lambda r: r.started_at
    )
