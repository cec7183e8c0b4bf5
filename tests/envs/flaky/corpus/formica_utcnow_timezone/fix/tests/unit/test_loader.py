from formica.loader import Loader
from datetime import datetime, timedelta, timezone


def test_utcnow():
    load = Loader({"Resources": {"Test": {"days": "1"}}})
    actual = load.template()
    assert actual == {"Resources": {"Test": (datetime.now(timezone.utc) + timedelta(days=1)).strftime("%Y-%m-%d %H:%M")}}
