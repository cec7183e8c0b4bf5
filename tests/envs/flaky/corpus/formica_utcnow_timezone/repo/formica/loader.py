from datetime import datetime, timedelta, timezone


def utcnow(days=0):
    """The template helper ``utcnow`` (arrow.utcnow upstream), shifted by ``days``."""
    return datetime.now(timezone.utc) + timedelta(days=days)


class Loader:
    """Renders CloudFormation templates; exposes helpers to the template context."""

    def __init__(self, template):
        self.template_source = template

    def template(self):
        # The real loader renders Jinja2; the helper call is all this test needs.
        days = int(self.template_source["Resources"]["Test"]["days"])
        return {"Resources": {"Test": utcnow(days).strftime("%Y-%m-%d %H:%M")}}
