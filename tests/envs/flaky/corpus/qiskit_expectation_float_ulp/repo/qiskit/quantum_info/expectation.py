def expectation_value(counts, values):
    """Sum of p(outcome) * value(outcome) over the measured outcomes."""
    shots = sum(counts.values())
    return sum(counts[k] / shots * values[k] for k in set(counts))
