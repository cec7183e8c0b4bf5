import random


def sample_expval(shots):
    """Finite-shot estimate of <Z> for the |+> state (exact value 0)."""
    return sum(random.choice((1, -1)) for _ in range(shots)) / shots
