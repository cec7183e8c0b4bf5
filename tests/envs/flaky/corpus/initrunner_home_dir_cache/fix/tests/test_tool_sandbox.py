import os

import pytest

from initrunner.config import get_home_dir, is_store_path_allowed


@pytest.fixture(autouse=True)
def _reset_home_dir_cache():
    get_home_dir.cache_clear()
    yield
    get_home_dir.cache_clear()


class TestStorePathRestriction:
    def test_path_under_initrunner_passes(self):
        home = os.path.join(os.getcwd(), ".initrunner")
        assert is_store_path_allowed(os.path.join(home, "stores", "a.db"))


def test_home_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("INITRUNNER_HOME", str(tmp_path))
    assert get_home_dir() == str(tmp_path)
