"""Identifier and slug conversions."""


def slugify(text):
    """Lowercase words of letters/digits joined by single hyphens."""
    words = []
    current = ""
    for ch in text.lower():
        if ch.isalnum():
            current += ch
        elif current:
            words.append(current)
            current = ""
    if current:
        words.append(current)
    return "-".join(words)


def camel_to_snake(name):
    """``"parseHTTPResponse"`` -> ``"parse_http_response"``."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper():
            prev_lower = i > 0 and name[i - 1].islower()
            next_lower = i + 1 < len(name) and name[i + 1].islower()
            if i > 0 and (prev_lower or (next_lower and name[i - 1].isupper())):
                out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def snake_to_camel(name, upper_first=False):
    """``"max_line_length"`` -> ``"maxLineLength"``; empty parts are dropped."""
    parts = [p for p in name.split("_") if p]
    if not parts:
        return ""
    head = parts[0].capitalize() if upper_first else parts[0].lower()
    return head + "".join(p.capitalize() for p in parts[1:])
