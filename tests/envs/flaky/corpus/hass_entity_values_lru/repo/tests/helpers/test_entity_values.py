from homeassistant.helpers.entity_values import EntityValues as EV

ent = "test.test"


def test_override_single_value():
    store = EV({ent: {"key": "value"}})
    assert store.get(ent) == {"key": "value"}
    assert store.get.cache_info().currsize == 1


def test_override_by_domain():
    store = EV(domain={"test": {"key": "value"}})
    assert store.get(ent) == {"key": "value"}


def test_override_by_glob():
    store = EV(glob={"test.?e*": {"key": "value"}})
    assert store.get(ent) == {"key": "value"}
