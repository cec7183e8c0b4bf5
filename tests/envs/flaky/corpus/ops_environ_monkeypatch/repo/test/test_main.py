import os

from ops.main import _get_event_name


def test_dispatch_default():
    assert _get_event_name() == 'install'


def test_dispatch_config_changed():
    os.environ["JUJU_DISPATCH_PATH"] = "hooks/config-changed"
    assert _get_event_name() == 'config_changed'


def test_dispatch_action():
    os.environ["JUJU_DISPATCH_PATH"] = "actions/backup-now"
    assert _get_event_name() == 'backup_now'
