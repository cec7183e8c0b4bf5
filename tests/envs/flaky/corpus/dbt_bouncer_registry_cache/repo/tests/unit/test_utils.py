from dbt_bouncer import utils


def test_get_check_objects():
    assert sorted(utils.get_check_objects()) == ["check_model_names", "check_source_names"]


def test_broken_check_is_skipped(monkeypatch):
    monkeypatch.setitem(utils.REGISTRY, "check_source_names", None)
    assert sorted(utils.get_check_objects()) == ["check_model_names"]
