from datetime import datetime, timedelta, timezone
from unittest import mock

from sentry.replays import query
from sentry.replays.query import Replay, replays_today

FROZEN = datetime(2023, 2, 10, 12, 0, tzinfo=timezone.utc)


def test_replays_today():
    with mock.patch.object(query, "_now", return_value=FROZEN):
        replays = [
            Replay("b", FROZEN - timedelta(minutes=10)),
            Replay("a", FROZEN - timedelta(minutes=30)),
            Replay("old", FROZEN - timedelta(days=2)),
        ]
        assert [r.replay_id for r in replays_today(replays)] == ["a", "b"]
