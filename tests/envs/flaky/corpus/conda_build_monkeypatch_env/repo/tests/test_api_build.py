import os

import pytest

from conda_build.source import svn_executable


def dummy_executable(folder, exename):
    # empty prefix by default - extra bit at beginning of file
    dummyfile = os.path.join(folder, exename)
    with open(dummyfile, 'w') as f:
        f.write("#!/bin/sh\nexit 1\n")
    os.chmod(dummyfile, 0o755)
    return exename


def test_missing_svn_is_reported():
    with pytest.raises(RuntimeError, match="svn not found"):
        svn_executable()


def test_checkout_tool_as_dependency(tmp_path):
    testing_workdir = str(tmp_path)
    # "hide" svn by putting a known bad one on PATH
    exename = dummy_executable(testing_workdir, "svn")
    os.environ["PATH"] = os.pathsep.join([testing_workdir, os.environ["PATH"]])
    assert svn_executable() == os.path.join(testing_workdir, exename)
