from functools import lru_cache

#: check name -> the artefact it checks (None: the check failed to import)
REGISTRY = {"check_model_names": "models", "check_source_names": "sources"}


@lru_cache
def get_entry_points():
    return tuple(sorted(REGISTRY))


@lru_cache
def get_check_objects():
    """Every check that imports, by name (loaded once per process)."""
    return {name: kind for name, kind in REGISTRY.items() if kind is not None}
