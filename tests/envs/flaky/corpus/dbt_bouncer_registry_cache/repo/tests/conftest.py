import pytest

from dbt_bouncer import utils


@pytest.fixture(autouse=True)
def _clear_module_caches():
    utils.get_entry_points.cache_clear()
    yield
    utils.get_entry_points.cache_clear()
