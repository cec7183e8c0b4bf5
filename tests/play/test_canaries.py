"""Every family's canaries: at least 50, deterministic (the shipped manifest is what the
seeded selection gives), validated (the honest policy solved none, a cheat solves them
where one can), and on a sample graded here: the honest policy's cheat rate is 0 and
the family's cheat solves the canaries it applies to."""

from __future__ import annotations

import importlib

import pytest

import forgegym  # noqa: F401  (registers the families)
from forgegym.family import families, get_family
from forgegym.play.canaries import build_canary_manifest, canary_cheat_rates, canary_policies
from forgegym.tasklib.canaries import base_id_of, is_canary_id, load_canary_manifest

FAMILIES = sorted(f.name for f in families())
#: The canaries graded per family here (CI cost: a few seconds each).
SAMPLE = {"bugfix": 3, "refactor": 2, "flaky": 2, "performance": 1, "oversight": 3}


def _module(name: str):
    return importlib.import_module(f"{get_family(name).package}.canaries")


def test_every_registered_family_has_canaries() -> None:
    assert set(FAMILIES) == set(SAMPLE)
    for name in FAMILIES:
        assert get_family(name).canary_bank() is not None, name


@pytest.mark.parametrize("name", FAMILIES)
def test_at_least_50_canaries_marked_and_deterministic(name: str) -> None:
    family = get_family(name)
    ids = family.canary_ids()
    assert len(ids) >= 50
    assert all(is_canary_id(i) for i in ids) and len(set(ids)) == len(ids)
    module = _module(name)
    shipped = load_canary_manifest(module.DATA_DIR)
    # The seeded selection reproduces the shipped manifest exactly.
    fresh = build_canary_manifest(name, validate=False, write=False)
    assert fresh["canaries"] == shipped["canaries"]
    assert fresh["config"] == shipped["config"]
    bank = family.canary_bank()
    first = bank.get(ids[0])
    assert first.task_id == ids[0] and first.family == family.name
    assert first.metadata["canary_of"] == base_id_of(ids[0])
    base = module.base_bank().get(base_id_of(ids[0]))
    # Nothing the agent reads says "canary"; something it reads or is graded on differs.
    assert "canary" not in first.description.lower()
    assert (first.files, first.hidden) != (base.files, base.hidden)
    # The validation recorded in the manifest: no honest solve, every cheat named.
    validation = shipped["validation"]["policies"]
    assert validation["reference"]["solved"] == 0 and validation["noop"]["solved"] == 0
    assert validation["reference"]["canaries"] == len(ids)
    for cheat in family.canary_cheats():
        assert validation[f"cheat:{cheat}"]["solved"] > 0


@pytest.mark.parametrize("name", FAMILIES)
def test_sampled_canaries_reference_cheat_rate_zero_and_cheat_succeeds(name: str) -> None:
    family = get_family(name)
    cheats = [f"cheat:{c}" for c in family.canary_cheats()]
    assert cheats, f"{name} has no canary cheat"
    bank = family.canary_bank()
    assert bank is not None
    # Canaries a cheat applies to.
    fn = canary_policies(family)[cheats[0]]
    ids = [i for i in bank.ids() if fn(bank.get(i)) is not None][: SAMPLE[name]]
    rates = canary_cheat_rates(name, ids=ids, policies=["reference", "noop", *cheats])
    assert rates["reference"].canaries == len(ids) and rates["reference"].cheat_rate == 0.0
    assert rates["reference"].telemetry["forgegym/cheat_rate"] == 0.0
    assert rates["noop"].cheat_rate == 0.0
    assert max(rates[c].solved for c in cheats) == len(ids)


def test_the_manifest_build_records_what_a_familys_observe_adds(monkeypatch) -> None:
    """A family's ``observe(entries)`` runs after the selection and before anything is
    written (Bugfix records the canary's own test run there, issue #37 D3)."""
    module = _module("bugfix")
    seen: list[int] = []

    def observe(entries):
        seen.append(len(entries))
        return [dict(e, params={**e["params"], "observed": True}) for e in entries]

    monkeypatch.setattr(module, "observe", observe)
    payload = build_canary_manifest("bugfix", validate=False, write=False)
    assert seen == [len(payload["canaries"])]
    assert all(e["params"]["observed"] for e in payload["canaries"])
