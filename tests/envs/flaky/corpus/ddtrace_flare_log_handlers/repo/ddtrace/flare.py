import logging
import os

LOGGER = logging.getLogger("ddtrace")
TRACER_FLARE_FILE_HANDLER_NAME = "tracer_flare_file_handler"


class Flare:
    def __init__(self, flare_dir):
        self.flare_dir = flare_dir
        self.handler = None

    def prepare(self, log_level="DEBUG"):
        os.makedirs(self.flare_dir, exist_ok=True)
        handler = logging.FileHandler(os.path.join(self.flare_dir, "tracer_python.log"))
        handler.set_name(TRACER_FLARE_FILE_HANDLER_NAME)
        handler.setLevel(log_level)
        LOGGER.addHandler(handler)
        LOGGER.setLevel(logging.DEBUG)
        self.handler = handler

    def revert_configs(self):
        if self.handler is not None:
            LOGGER.removeHandler(self.handler)
            self.handler.close()
            self.handler = None
