import os

from conda_build.config import Config


def test_default_python_version():
    assert Config().python == "3.11"


def test_python_from_environment(monkeypatch):
    monkeypatch.setenv("CONDA_PY", "27")
    assert Config().python == "2.7"
