from functools import lru_cache


def dotty(dictionary=None, separator="."):
    return Dotty(dictionary if dictionary is not None else {}, separator)


class Dotty:
    def __init__(self, dictionary, separator="."):
        self._data = dictionary
        self.separator = separator

    @lru_cache(maxsize=32)
    def __getitem__(self, item):
        data = self._data
        for key in item.split(self.separator):
            data = data[key]
        return data

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default
