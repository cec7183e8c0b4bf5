from datetime import datetime as DateTime
from datetime import timedelta as TimeDelta


def credentialsForUser(user, lifetime=TimeDelta(days=180)):
    """JWT claims for ``user``; ``exp`` as a naive UTC-based timestamp."""
    expires = DateTime.now() + lifetime
    return {"sub": user, "exp": expires.replace(tzinfo=None)}
