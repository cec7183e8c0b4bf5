from datetime import datetime

from formica.loader import Loader


def test_utcnow():
    expected = datetime.now().strftime('%Y-%m-%d %H')
    assert Loader().utcnow('%Y-%m-%d %H') == expected
