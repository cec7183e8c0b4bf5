import datetime as dt

from ee import subscriptions

START = dt.datetime(2022, 1, 1, 0, 0, tzinfo=dt.timezone.utc)  # a Saturday


def test_schedule_only_update_still_recomputes_next_delivery_date():
    before = subscriptions.next_delivery_date("weekly", START)
    after = subscriptions.next_delivery_date("daily", START)
    assert after < before
