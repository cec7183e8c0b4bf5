import pytest


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    """Every test runs in a fresh working directory (tests write prefect.yaml)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def flow_name():
    return "etl"
