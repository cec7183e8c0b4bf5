"""Dotted version strings like ``"1.10.2"``."""


def parse(version):
    """``"1.10.2"`` -> ``[1, 10, 2]``; rejects empty or non-numeric parts."""
    parts = version.split(".")
    out = []
    for part in parts:
        if not part.isdigit():
            raise ValueError(f"bad version part {part!r}")
        out.append(int(part))
    return out


def compare(a, b):
    """-1, 0 or 1; missing trailing parts count as zero."""
    pa, pb = parse(a), parse(b)
    n = max(len(pa), len(pb))
    pa += [0] * (n - len(pa))
    pb += [0] * (n - len(pb))
    if pa < pb:
        return -1
    if pa > pb:
        return 1
    return 0


def bump(version, part):
    """Increment ``major``/``minor``/``patch``, zeroing the parts after it."""
    index = {"major": 0, "minor": 1, "patch": 2}[part]
    nums = parse(version) + [0, 0, 0]
    nums = nums[:3]
    nums[index] += 1
    for i in range(index + 1, 3):
        nums[i] = 0
    return ".".join(str(n) for n in nums)


def latest(versions):
    """The greatest version string (the first of equals), or None."""
    best = None
    for v in versions:
        if best is None or compare(v, best) > 0:
            best = v
    return best
