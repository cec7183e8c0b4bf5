import fnmatch
from functools import lru_cache


class EntityValues:
    def __init__(self, overrides=None, domain=None, glob=None):
        self._overrides = overrides or {}
        self._domain = domain or {}
        self._glob = glob or {}

    @lru_cache(maxsize=16384)
    def get(self, entity_id):
        domain = entity_id.split(".", 1)[0]
        result = dict(self._domain.get(domain, {}))
        for pattern, values in self._glob.items():
            if fnmatch.fnmatch(entity_id, pattern):
                result.update(values)
        result.update(self._overrides.get(entity_id, {}))
        return result
