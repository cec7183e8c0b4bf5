import unittest
from unittest import mock

from rqd.nimby import Nimby


class RqNimbyTests(unittest.TestCase):
    def setUp(self):
        self.rqCore = mock.MagicMock()
        self.nimby = Nimby(self.rqCore, idle_seconds=5)

    def test_lockNimby(self):
        self.nimby.start()
        self.nimby.join()

        self.rqCore.onNimbyLock.assert_called_with()
