"""Numeric sequences: running sums, differences, moving averages."""


def cumulative(values):
    """Running totals."""
    out = []
    total = 0
    for v in values:
        total += v
        out.append(total)
    return out


def differences(values):
    """``values[i+1] - values[i]`` for each adjacent pair."""
    return [values[i + 1] - values[i] for i in range(len(values) - 1)]


def moving_average(values, k):
    """Means of each window of ``k`` consecutive values."""
    if k <= 0:
        raise ValueError("k must be positive")
    out = []
    window = sum(values[:k])
    for i in range(k, len(values) + 1):
        if i > k:
            window += values[i - 1] - values[i - k - 1]
        out.append(window / k)
    return out


def longest_increasing_run(values):
    """Length of the longest strictly increasing contiguous run."""
    if not values:
        return 0
    best = run = 1
    for i in range(1, len(values)):
        if values[i] > values[i - 1]:
            run += 1
            best = max(best, run)
        else:
            run = 1
    return best
