"""Iterator helpers over lists."""


def group_consecutive(items):
    """Runs of equal adjacent items, each run as a list."""
    groups = []
    for item in items:
        if groups and groups[-1][-1] == item:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def take_while_increasing(items):
    """The longest prefix that is strictly increasing."""
    out = []
    for item in items:
        if out and item <= out[-1]:
            break
        out.append(item)
    return out


def interleave(a, b):
    """Alternate items of ``a`` and ``b``; leftovers go at the end."""
    out = []
    for i in range(max(len(a), len(b))):
        if i < len(a):
            out.append(a[i])
        if i < len(b):
            out.append(b[i])
    return out


def partition(items, pivot):
    """``[smaller, not_smaller]`` than ``pivot``, order preserved."""
    low, high = [], []
    for item in items:
        if item < pivot:
            low.append(item)
        else:
            high.append(item)
    return [low, high]
