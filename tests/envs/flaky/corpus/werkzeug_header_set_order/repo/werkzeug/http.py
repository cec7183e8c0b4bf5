def dump_header(iterable):
    """Render a list or set of header items: ``a, b, c``."""
    return ", ".join(str(item) for item in iterable)


def parse_list_header(value):
    return [item.strip() for item in value.split(",") if item.strip()]
