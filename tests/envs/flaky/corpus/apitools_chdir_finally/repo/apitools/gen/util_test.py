import os

import pytest

from apitools.gen import util


def test_read_relative_config():
    assert os.path.isfile(os.path.join("apitools", "gen", "util.py"))


def test_chdir_error_propagates(tmp_path):
    with pytest.raises(ValueError):
        with util.Chdir(str(tmp_path / "out")):
            raise ValueError("generation failed")
