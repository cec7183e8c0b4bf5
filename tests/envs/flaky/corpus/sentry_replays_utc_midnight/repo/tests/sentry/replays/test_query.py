import time
from datetime import datetime, timedelta, timezone

from sentry.replays.query import Replay, replays_today


def test_replays_today():
    now = datetime.fromtimestamp(time.time(), timezone.utc)
    replays = [
        Replay("b", now - timedelta(minutes=1)),
        Replay("a", now - timedelta(minutes=3)),
        Replay("old", now - timedelta(days=2)),
    ]
    assert [r.replay_id for r in replays_today(replays)] == ["a", "b"]
