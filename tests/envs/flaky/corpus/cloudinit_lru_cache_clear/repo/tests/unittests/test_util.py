from unittest import mock

from cloudinit import util


def test_get_distro_ubuntu():
    with mock.patch.object(util, "read_os_release", return_value={"ID": "ubuntu"}):
        assert util.get_distro() == "ubuntu"


def test_get_distro_alpine():
    with mock.patch.object(util, "read_os_release", return_value={"ID": "alpine"}):
        assert util.get_distro() == "alpine"
