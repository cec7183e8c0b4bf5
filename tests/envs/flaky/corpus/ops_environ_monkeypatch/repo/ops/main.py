import os


def _get_event_name():
    """The Juju event this dispatch is for (the charm's ``dispatch`` path)."""
    path = os.environ.get("JUJU_DISPATCH_PATH", "hooks/install")
    return os.path.basename(path).replace("-", "_")
