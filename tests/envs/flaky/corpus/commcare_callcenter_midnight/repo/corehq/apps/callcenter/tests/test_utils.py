import time
import unittest
from datetime import date, datetime, timedelta
from datetime import time as dtime

from corehq.apps.callcenter.utils import domain_midnights


class DomainTimezoneTests(unittest.TestCase):
    def test_midnight_for_domain(self):
        offset = -4
        midnights = domain_midnights(offset)
        midnight_past = datetime.combine(date.fromtimestamp(time.time()), dtime())
        self.assertEqual(midnights[0], midnight_past - timedelta(hours=offset))
        self.assertEqual(midnights[1], midnights[0] - timedelta(days=1))
