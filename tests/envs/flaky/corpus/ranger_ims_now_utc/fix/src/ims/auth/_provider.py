from datetime import datetime as DateTime
from datetime import timedelta as TimeDelta
from datetime import timezone

UTC = timezone.utc


def credentialsForUser(user, lifetime=TimeDelta(days=180)):
    """JWT claims for ``user``; ``exp`` as a naive UTC-based timestamp."""
    expires = DateTime.now(tz=UTC) + lifetime
    return {"sub": user, "exp": expires.replace(tzinfo=None)}
