import os


class MarkDownFile:
    """A markdown file, created (empty) when named, in ``dirname`` if given."""

    def __init__(self, name="", dirname=""):
        if name:
            self.file_name = name if name.endswith(".md") else name + ".md"
            if dirname:
                self.file_name = os.path.join(dirname, self.file_name)
            with open(self.file_name, "w+", encoding="utf-8"):
                pass

    def append_end(self, data):
        with open(self.file_name, "a", encoding="utf-8") as handle:
            handle.write(data)

    @staticmethod
    def read_file(file_name):
        """The text of ``file_name`` (relative to the working directory)."""
        if not os.path.exists(file_name):
            raise FileNotFoundError(file_name)
        with open(file_name, encoding="utf-8") as handle:
            return handle.read()
