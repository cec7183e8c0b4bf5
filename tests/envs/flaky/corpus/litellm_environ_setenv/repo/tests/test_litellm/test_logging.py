import os

from litellm._logging import log_level


def test_default_log_level():
    assert log_level() == "WARNING"


def test_debug_log_level():
    os.environ["LITELLM_LOG"] = "DEBUG"
    assert log_level() == "DEBUG"
