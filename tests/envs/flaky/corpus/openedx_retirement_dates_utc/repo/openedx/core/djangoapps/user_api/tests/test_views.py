import time
from datetime import datetime, timezone

from openedx.core.djangoapps.user_api.views import retirements_by_status_and_date


def test_retirements_by_date_today():
    now = datetime.fromtimestamp(time.time(), timezone.utc)
    retirements = [
        {"user": "learner", "status": "COMPLETE", "created": now},
        {"user": "other", "status": "PENDING", "created": now},
    ]
    found = retirements_by_status_and_date(retirements, "COMPLETE")
    assert [r["user"] for r in found] == ["learner"]
