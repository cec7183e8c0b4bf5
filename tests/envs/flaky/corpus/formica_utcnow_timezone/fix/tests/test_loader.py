from datetime import datetime, timezone

from formica.loader import Loader


def test_utcnow():
    expected = datetime.now(timezone.utc).strftime('%Y-%m-%d %H')
    assert Loader().utcnow('%Y-%m-%d %H') == expected
