import os


class _ModelBackend:
    """Talks to the Juju hook tools (reduced: relation-list is a fake)."""

    def __init__(self, relation_list_app=None):
        self._relation_list_app = relation_list_app or {}

    def relation_remote_app_name(self, relation_id):
        """The remote application of ``relation_id``: from the hook's environment when
        it is the hook's own relation, else from ``relation-list --app``."""
        event_relation_id = os.environ.get('JUJU_RELATION_ID')
        if event_relation_id is not None and 'JUJU_REMOTE_APP' in os.environ:
            if relation_id == int(event_relation_id.split(':')[-1]):
                return os.environ['JUJU_REMOTE_APP']
        return self._relation_list_app.get(relation_id)
