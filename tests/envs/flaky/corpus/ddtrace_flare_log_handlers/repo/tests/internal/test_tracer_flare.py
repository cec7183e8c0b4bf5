import logging
import unittest

from ddtrace.flare import LOGGER, TRACER_FLARE_FILE_HANDLER_NAME, Flare


def _get_handler():
    for handler in LOGGER.handlers:
        if handler.name == TRACER_FLARE_FILE_HANDLER_NAME:
            return handler
    return None


class TracerFlareTests(unittest.TestCase):
    def setUp(self):
        import tempfile

        self.flare_dir = tempfile.mkdtemp()
        self.flare = Flare(self.flare_dir)

    def test_native_logs(self):
        self.flare.prepare("DEBUG")
        assert _get_handler() is not None
        logging.getLogger("ddtrace.tracer").debug("debug log")
        self.flare.revert_configs()
        assert _get_handler() is None

    def test_json_logs(self):
        self.flare.prepare("DEBUG")
        logging.getLogger("ddtrace.tracer").info("info log")
        assert _get_handler() is not None
