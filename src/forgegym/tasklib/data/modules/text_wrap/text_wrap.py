"""Greedy word wrapping and padding."""


def wrap(text, width):
    """Wrap words greedily into lines of at most ``width`` characters (long words stay whole)."""
    if width < 1:
        raise ValueError("width must be >= 1")
    lines = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current = current + " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def center(text, width, fill="*"):
    """Center ``text`` in ``width`` using ``fill``; extra fill goes to the right."""
    total = width - len(text)
    if total <= 0:
        return text
    left = total // 2
    right = total - left
    return fill * left + text + fill * right


def truncate(text, limit, suffix="..."):
    """Shorten ``text`` to at most ``limit`` characters, ending with ``suffix`` when cut."""
    if len(text) <= limit:
        return text
    if limit <= len(suffix):
        return suffix[:limit]
    return text[: limit - len(suffix)] + suffix
