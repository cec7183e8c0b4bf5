from datetime import datetime, timezone


class Loader:
    """Renders CloudFormation templates; exposes helpers to the template context."""

    def utcnow(self, fmt="%Y-%m-%dT%H:%M:%SZ"):
        return datetime.now(timezone.utc).strftime(fmt)
