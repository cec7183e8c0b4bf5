import os


def load_help(relative_path):
    """Read a script's help text; ``relative_path`` is relative to the working directory."""
    if not os.path.exists(relative_path):
        return ""
    with open(relative_path, encoding="utf-8") as f:
        return f.read()


def write_header(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
