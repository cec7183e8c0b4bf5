import os

from initrunner.config import get_home_dir, is_store_path_allowed


class TestStorePathRestriction:
    def test_path_under_initrunner_passes(self):
        home = os.path.join(os.getcwd(), ".initrunner")
        assert is_store_path_allowed(os.path.join(home, "stores", "a.db"))


def test_home_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv("INITRUNNER_HOME", str(tmp_path))
    assert get_home_dir() == str(tmp_path)
