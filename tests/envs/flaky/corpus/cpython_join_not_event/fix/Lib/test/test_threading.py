import threading
import unittest

from Lib.worker import Worker


class ThreadTests(unittest.TestCase):
    def test_finalization_releases_resources(self):
        worker = Worker()
        thread = threading.Thread(target=worker.run)
        thread.start()
        thread.join()
        self.assertEqual(worker.held, [])
        self.assertEqual(worker.total, 519500)
