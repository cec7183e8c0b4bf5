import datetime as dt
from unittest import mock

from ee import subscriptions

START = dt.datetime(2022, 1, 1, 0, 0, tzinfo=dt.timezone.utc)  # a Saturday
MONDAY = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


def test_schedule_only_update_still_recomputes_next_delivery_date():
    with mock.patch.object(subscriptions, "_now", return_value=MONDAY):
        before = subscriptions.next_delivery_date("weekly", START)
        after = subscriptions.next_delivery_date("daily", START)
    assert after < before
