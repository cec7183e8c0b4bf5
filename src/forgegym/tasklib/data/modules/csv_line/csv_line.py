"""A tiny CSV line splitter and key/value parser."""


def split_line(line, sep=","):
    """Split one CSV line; double quotes group text and ``""`` is a literal quote."""
    fields = []
    current = []
    quoted = False
    i = 0
    while i < len(line):
        ch = line[i]
        if quoted:
            if ch == '"':
                if i + 1 < len(line) and line[i + 1] == '"':
                    current.append('"')
                    i += 1
                else:
                    quoted = False
            else:
                current.append(ch)
        elif ch == '"':
            quoted = True
        elif ch == sep:
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if quoted:
        raise ValueError("unterminated quote")
    fields.append("".join(current))
    return fields


def parse_pairs(text, sep=";"):
    """``"a=1;b=2"`` -> ``{"a": "1", "b": "2"}``; blank items are skipped, keys stripped."""
    result = {}
    for item in text.split(sep):
        if not item.strip():
            continue
        if "=" not in item:
            raise ValueError(f"missing '=' in {item!r}")
        key, value = item.split("=", 1)
        result[key.strip()] = value
    return result


def join_line(fields, sep=","):
    """Inverse of :func:`split_line`: quote fields containing the separator or quotes."""
    out = []
    for field in fields:
        if sep in field or '"' in field:
            out.append('"' + field.replace('"', '""') + '"')
        else:
            out.append(field)
    return sep.join(out)
