import datetime as dt

from app.agents.voyage import actions_daily


def test_stale_batch_is_visible_but_does_not_fail_the_run():
    yesterday = actions_daily._now().date() - dt.timedelta(days=1)
    obs = actions_daily.check_batches([yesterday])
    assert obs["ok"]
    assert obs["stale_batch_dates"] == [yesterday.isoformat()]
