import unittest

from datumaro.util.multi_procs_util import Producer


class MultiProcUtilTest(unittest.TestCase):
    def test_raise_exception_in_main_thread(self):
        logs = []
        producer = Producer([5, 6, 7, None, 8], logs)
        producer.consume(join_timeout=None)
        self.assertEqual(logs, ["producer failed: item 3 is invalid"])

    def test_results(self):
        producer = Producer([1, 2], [])
        self.assertEqual(producer.consume(join_timeout=None), [19900, 79800])
