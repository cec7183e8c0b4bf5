import unittest

from werkzeug import http


class HTTPUtilityTestCase(unittest.TestCase):
    def test_dump_header(self):
        self.assertEqual(http.dump_header(['foo', 'bar']), 'foo, bar')
        self.assertEqual(
            set(http.parse_list_header(http.dump_header(set(['foo', 'bar', 'baz'])))),
            set(['foo', 'bar', 'baz']),
        )
