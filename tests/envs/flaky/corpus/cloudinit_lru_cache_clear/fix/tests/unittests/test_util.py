from unittest import mock

import pytest

from cloudinit import util


@pytest.fixture(autouse=True)
def clear_lru_cache():
    yield
    util.get_distro.cache_clear()


def test_get_distro_ubuntu():
    with mock.patch.object(util, "read_os_release", return_value={"ID": "ubuntu"}):
        assert util.get_distro() == "ubuntu"


def test_get_distro_alpine():
    with mock.patch.object(util, "read_os_release", return_value={"ID": "alpine"}):
        assert util.get_distro() == "alpine"
