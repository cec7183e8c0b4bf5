"""Split sequences into chunks and sliding windows."""


def chunk_list(items, size):
    """Split ``items`` into consecutive chunks of ``size``; the last may be shorter."""
    if size <= 0:
        raise ValueError("size must be positive")
    chunks = []
    for start in range(0, len(items), size):
        chunks.append(items[start : start + size])
    return chunks


def flatten(chunks):
    """Concatenate a list of lists."""
    out = []
    for chunk in chunks:
        out.extend(chunk)
    return out


def windows(items, size):
    """All contiguous windows of length ``size``, left to right."""
    if size <= 0:
        raise ValueError("size must be positive")
    return [items[i : i + size] for i in range(len(items) - size + 1)]


def pairwise(items):
    """Adjacent pairs ``[a, b]`` of ``items``."""
    return [[items[i], items[i + 1]] for i in range(len(items) - 1)]
