from datetime import datetime as DateTime
from datetime import timedelta as TimeDelta
from datetime import timezone

from src.ims.auth._provider import credentialsForUser

UTC = timezone.utc


def test_credentialsForUser():
    credentials = credentialsForUser("Hubcap")
    expected = (DateTime.now(tz=UTC) + TimeDelta(days=180)).replace(tzinfo=None)
    expires = credentials["exp"]
    assert abs((expires - expected).total_seconds()) < 60
