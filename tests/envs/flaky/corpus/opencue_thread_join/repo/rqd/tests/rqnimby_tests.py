import unittest
from unittest import mock

import rqd.rqnimby


class RqNimbyTests(unittest.TestCase):
    def setUp(self):
        self.rqCore = mock.MagicMock()
        self.nimby = rqd.rqnimby.Nimby(self.rqCore)
        self.nimby.daemon = True

    @mock.patch.object(rqd.rqnimby.Nimby, 'unlockedIdle')
    def test_initialState(self, unlockedIdleMock):
        self.nimby.daemon = True

        self.nimby.start()

        # Initial state should be "unlocked and idle".
        unlockedIdleMock.assert_called()

        self.nimby.stop()
