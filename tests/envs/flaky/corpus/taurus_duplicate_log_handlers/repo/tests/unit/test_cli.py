import io
import logging
import unittest

from bzt import cli


class TestCLI(unittest.TestCase):
    def test_log_lines(self):
        stream = io.StringIO()
        self.assertEqual(cli.run(stream), 0)
        self.assertEqual(stream.getvalue().count("starting"), 1)
        console = [h for h in cli.LOG.handlers if type(h) is logging.StreamHandler]
        self.assertEqual(len(console), 1)

    def test_exit_code(self):
        self.assertEqual(cli.run(io.StringIO()), 0)
