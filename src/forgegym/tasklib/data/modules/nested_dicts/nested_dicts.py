"""Flattening and querying nested dictionaries."""


def flatten(data, sep="."):
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; empty dicts are kept as leaves."""
    out = {}

    def walk(node, prefix):
        for key, value in node.items():
            path = prefix + sep + key if prefix else key
            if isinstance(value, dict) and value:
                walk(value, path)
            else:
                out[path] = value

    walk(data, "")
    return out


def unflatten(flat, sep="."):
    """Inverse of :func:`flatten` for keys without conflicts."""
    out = {}
    for path, value in flat.items():
        keys = path.split(sep)
        node = out
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return out


def get_path(data, path, default=None, sep="."):
    """Value at ``path`` or ``default`` when any key is missing."""
    node = data
    for key in path.split(sep):
        if not isinstance(node, dict) or key not in node:
            return default
        node = node[key]
    return node


def depth(data):
    """Nesting depth: a non-dict is 0, ``{}`` is 1."""
    if not isinstance(data, dict):
        return 0
    return 1 + max((depth(v) for v in data.values()), default=0)
