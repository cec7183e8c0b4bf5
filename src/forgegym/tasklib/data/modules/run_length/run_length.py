"""Run-length encoding of strings."""


def encode(text):
    """Runs of equal characters as ``[char, count]`` pairs."""
    runs = []
    for ch in text:
        if runs and runs[-1][0] == ch:
            runs[-1][1] += 1
        else:
            runs.append([ch, 1])
    return runs


def decode(runs):
    """Inverse of :func:`encode`."""
    parts = []
    for ch, count in runs:
        if count < 0:
            raise ValueError("negative run length")
        parts.append(ch * count)
    return "".join(parts)


def compress(text):
    """``"aaab"`` -> ``"a3b"``: counts above one are written after the character."""
    out = []
    for ch, count in encode(text):
        out.append(ch if count == 1 else f"{ch}{count}")
    return "".join(out)


def longest_run(text):
    """``[char, length]`` of the first longest run, or ``None`` for an empty string."""
    best = None
    for ch, count in encode(text):
        if best is None or count > best[1]:
            best = [ch, count]
    return best
