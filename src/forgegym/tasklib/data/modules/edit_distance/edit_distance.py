"""Edit distances between strings."""


def levenshtein(a, b):
    """Minimum insertions, deletions and substitutions turning ``a`` into ``b``."""
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
        prev = cur
    return prev[len(b)]


def hamming(a, b):
    """Positions at which equal-length strings differ."""
    if len(a) != len(b):
        raise ValueError("lengths differ")
    return sum(1 for x, y in zip(a, b) if x != y)


def closest(word, candidates):
    """The candidate with the smallest Levenshtein distance (earliest on ties), or None."""
    best = None
    best_distance = None
    for candidate in candidates:
        d = levenshtein(word, candidate)
        if best_distance is None or d < best_distance:
            best, best_distance = candidate, d
    return best


def lcs_length(a, b):
    """Length of the longest common subsequence."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            if a[i] == b[j]:
                table[i + 1][j + 1] = table[i][j] + 1
            else:
                table[i + 1][j + 1] = max(table[i][j + 1], table[i + 1][j])
    return table[len(a)][len(b)]
