import logging

from thundra.context import reset_execution_context
from thundra.plugins.log.thundra_log_handler import ThundraLogHandler


def test_log_plugin_with_initialization():
    context = reset_execution_context()
    logger = logging.getLogger("test_handler")
    log_handler = ThundraLogHandler()
    logger.addHandler(log_handler)
    try:
        logger.setLevel(logging.INFO)
        logger.info("This is an info log")
        assert len(context.logs) == 1
        assert context.logs[0]["logMessage"] == "This is an info log"
    finally:
        logger.removeHandler(log_handler)


def test_log_level_filter():
    context = reset_execution_context()
    logger = logging.getLogger("test_filter")
    handler = ThundraLogHandler()
    logger.addHandler(handler)
    try:
        logger.setLevel(logging.WARNING)
        logger.info("dropped")
        assert context.logs == []
    finally:
        logger.removeHandler(handler)
