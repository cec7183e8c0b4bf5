"""Word frequencies."""


def words(text):
    """Lowercase words: maximal runs of letters or apostrophes."""
    out = []
    current = ""
    for ch in text.lower():
        if ch.isalpha() or ch == "'":
            current += ch
        elif current:
            out.append(current)
            current = ""
    if current:
        out.append(current)
    return out


def counts(text):
    """Word -> count."""
    result = {}
    for w in words(text):
        result[w] = result.get(w, 0) + 1
    return result


def top_k(text, k):
    """The ``k`` most common words as ``[word, count]``, ties broken alphabetically."""
    ranked = sorted(counts(text).items(), key=lambda item: (-item[1], item[0]))
    return [[w, c] for w, c in ranked[:k]]


def hapaxes(text):
    """Words that occur exactly once, sorted."""
    return sorted(w for w, c in counts(text).items() if c == 1)
