import os
from functools import lru_cache


@lru_cache(maxsize=1)
def get_home_dir():
    return os.environ.get("INITRUNNER_HOME") or os.path.join(os.getcwd(), ".initrunner")


def is_store_path_allowed(path):
    return os.path.abspath(path).startswith(os.path.abspath(get_home_dir()) + os.sep)
