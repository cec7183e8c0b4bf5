import os

import pytest

from ops.model import _ModelBackend


class TestModelBackend:
    @pytest.fixture(autouse=True)
    def _backend(self):
        self.backend = _ModelBackend({5: 'remoteapp2'})

    def test_relation_remote_app_name_same_relation_from_hook_tool(
        self, monkeypatch: pytest.MonkeyPatch
    ):
        # In a hook of relation 5 without JUJU_REMOTE_APP, relation-list answers.
        monkeypatch.setenv('JUJU_RELATION_ID', 'db:5')
        assert self.backend.relation_remote_app_name(5) == 'remoteapp2'

    def test_relation_remote_app_name_env(self, monkeypatch: pytest.MonkeyPatch):
        monkeypatch.setenv('JUJU_RELATION_ID', 'x:5')
        monkeypatch.setenv('JUJU_REMOTE_APP', 'remoteapp1')
        assert self.backend.relation_remote_app_name(5) == 'remoteapp1'
        os.environ['JUJU_RELATION_ID'] = '5'
        assert self.backend.relation_remote_app_name(5) == 'remoteapp1'

    def test_relation_remote_app_name_script_success(self, monkeypatch: pytest.MonkeyPatch):
        # JUJU_RELATION_ID and JUJU_REMOTE_APP both unset
        assert self.backend.relation_remote_app_name(5) == 'remoteapp2'

        # JUJU_RELATION_ID unset but JUJU_REMOTE_APP set
        monkeypatch.delenv('JUJU_RELATION_ID', raising=False)
        os.environ['JUJU_REMOTE_APP'] = 'remoteapp1'
        assert self.backend.relation_remote_app_name(5) == 'remoteapp2'
