from functools import lru_cache


def _fetch_spec(api_key):
    raise ConnectionError("the tests mock the API")


@lru_cache()
def get_swagger_spec(api_key):
    return _fetch_spec(api_key)


def generate_classes(api_key):
    """One endpoint class name per top-level path of the API's swagger spec."""
    spec = get_swagger_spec(api_key)
    return sorted({path.strip("/").split("/")[0] for path in spec["paths"]})
