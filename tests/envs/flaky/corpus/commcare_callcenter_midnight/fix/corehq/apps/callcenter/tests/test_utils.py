import time
import unittest
from datetime import datetime, timedelta, timezone
from datetime import time as dtime

from corehq.apps.callcenter.utils import domain_midnights


class DomainTimezoneTests(unittest.TestCase):
    def test_midnight_for_domain(self):
        offset = -4
        midnights = domain_midnights(offset)
        utc_now = datetime.fromtimestamp(time.time(), timezone.utc).replace(tzinfo=None)
        domain_today = (utc_now + timedelta(hours=offset)).date()
        midnight_past = datetime.combine(domain_today, dtime())
        self.assertEqual(midnights[0], midnight_past - timedelta(hours=offset))
        self.assertEqual(midnights[1], midnights[0] - timedelta(days=1))
