import datetime as dt
from unittest import mock

from app.agents.voyage import actions_daily

WEDNESDAY = dt.datetime(2026, 7, 29, 12, 0, tzinfo=dt.timezone.utc)


def test_stale_batch_is_visible_but_does_not_fail_the_run():
    with mock.patch.object(actions_daily, "_now", return_value=WEDNESDAY):
        yesterday = actions_daily._now().date() - dt.timedelta(days=1)
        obs = actions_daily.check_batches([yesterday])
    assert obs["ok"]
    assert obs["stale_batch_dates"] == [yesterday.isoformat()]
