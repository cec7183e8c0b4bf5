import time
from datetime import datetime, timezone

from itou.approvals import Approval


def test_is_valid_today():
    today = datetime.fromtimestamp(time.time(), timezone.utc).date()
    approval = Approval(start_at=today, end_at=today)
    assert approval.is_valid()
