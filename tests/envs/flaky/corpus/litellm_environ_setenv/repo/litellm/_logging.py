import os


def log_level():
    return os.environ.get("LITELLM_LOG", "WARNING").upper()
