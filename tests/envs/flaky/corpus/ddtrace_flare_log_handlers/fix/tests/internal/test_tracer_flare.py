import logging
import unittest

from ddtrace.flare import LOGGER, TRACER_FLARE_FILE_HANDLER_NAME, Flare


def _get_handler():
    for handler in LOGGER.handlers:
        if handler.name == TRACER_FLARE_FILE_HANDLER_NAME:
            return handler
    return None


def _remove_handlers():
    for handler in list(LOGGER.handlers):
        if handler.name == TRACER_FLARE_FILE_HANDLER_NAME:
            LOGGER.removeHandler(handler)
            handler.close()


class TracerFlareTests(unittest.TestCase):
    def setUp(self):
        import tempfile

        _remove_handlers()
        self.flare_dir = tempfile.mkdtemp()
        self.flare = Flare(self.flare_dir)

    def tearDown(self):
        _remove_handlers()

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
