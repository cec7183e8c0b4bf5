"""One family shape (issue 35, docs/design/002-family-contract.md): every built-in family
has the same file for every shared role, defining the same names, and its registration
states nothing that :meth:`Family.in_package` derives.

:data:`ROLES` is the list of shared roles: a file (or folder) of ``envs/<family>/`` and
the names it must define, ``{stem}`` standing for the family's id stem
(``Forge/FlakyRepair-v0`` -> ``FlakyRepair``). :data:`CODE_ROLES` are the roles of the
families whose agent edits code (their env is a :class:`~forgegym.envs.code_env.CodeEnv`).
Importing a role's module is cheap enough here: every family is imported anyway.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from forgegym.core.actions import ActionSet
from forgegym.envs.code_env import CodeEnv
from forgegym.family import Family, families, load_families

load_families()
ENVS = Path(importlib.import_module("forgegym.envs").__file__ or "").parent
#: Shared role -> the names its module defines (``{stem}``: the family's id stem).
ROLES: dict[str, tuple[str, ...]] = {
    "__init__.py": ("FAMILY",),
    "env.py": ("{stem}Env",),
    "bank.py": ("{stem}TaskBank", "bank_stats"),
    "grader.py": ("{stem}Grader",),
    "actions.py": ("ACTIONS",),
    "policies.py": ("partial_action",),
    "hacks.py": ("HACKS",),
    "canaries.py": ("CONFIG", "DATA_DIR", "base_bank", "plan", "build", "canary_bank", "CHEATS"),
    "data/": (),
}
#: Roles of the code families (the agent edits files): the one scanner, the seeded
#: generator of the manifest, the typed view of a task's hidden data, the benchmark.
CODE_ROLES: dict[str, tuple[str, ...]] = {
    "scan.py": ("scan_submission",),
    "generator.py": (),
    "hidden.py": ("{stem}Hidden",),
    "bench.py": ("run_bench",),
}
#: Fields :meth:`Family.in_package` derives by convention: a built-in registration
#: leaves them unset (it names only what no convention says).
DERIVED = ("task_bank", "grader", "action_models", "reference", "partial", "hacks")
DERIVED += ("bench", "stats", "scanners")
BUILT_IN = [f for f in families() if f.package and f.package.startswith("forgegym.envs.")]
FAMILIES = [pytest.param(f, id=f.name) for f in BUILT_IN]


def _roles(family: Family) -> dict[str, tuple[str, ...]]:
    code = issubclass(family.env_cls, CodeEnv)
    return {**ROLES, **(CODE_ROLES if code else {})}


def test_the_five_families_are_checked() -> None:
    assert {f.name for f in BUILT_IN} == {"bugfix", "flaky", "oversight", "performance", "refactor"}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_shared_role_has_its_file_and_names(family: Family) -> None:
    assert family.package is not None
    folder = ENVS / family.package.rpartition(".")[2]
    missing: list[str] = []
    for role, names in _roles(family).items():
        if not (folder / role).exists():
            missing.append(role)
            continue
        if role.endswith("/"):
            continue
        module_name = family.package if role == "__init__.py" else f"{family.package}.{role[:-3]}"
        module = importlib.import_module(module_name)
        missing += [
            f"{role}:{name.format(stem=family.stem)}"
            for name in names
            if not hasattr(module, name.format(stem=family.stem))
        ]
    assert not missing, f"{family.name} lacks {missing}"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_registration_names_nothing_in_package_derives(family: Family) -> None:
    named = [name for name in DERIVED if getattr(family, name) not in (None, {})]
    assert not named, f"{family.name} spells out {named}: rename to the conventional names"
    assert family.env_class == f"{family.package}.env:{family.stem}Env"


@pytest.mark.parametrize("family", FAMILIES)
def test_each_role_is_what_the_family_uses(family: Family) -> None:
    """The conventional objects are the ones the env and the tools use: the env parses
    ``actions.ACTIONS``, the bank and grader are the role modules' classes, the canaries
    are ``canaries.canary_bank``, and the one scanner is ``scan.scan_submission``."""
    package = family.package
    actions = importlib.import_module(f"{package}.actions").ACTIONS
    assert isinstance(actions, ActionSet) and family.env_cls.action_set is actions
    assert family.actions() == actions.models
    assert type(family.make_task_bank()).__module__ == f"{package}.bank"
    assert family.grader_factory().__module__ == f"{package}.grader"
    assert family.env_cls.canaries == f"{package}.canaries:canary_bank"
    assert set(family.canary_cheats()) == set(importlib.import_module(f"{package}.canaries").CHEATS)
    scanners = family.patch_scanners()
    if issubclass(family.env_cls, CodeEnv):
        assert list(scanners) == [family.name]
        assert scanners[family.name].__module__ == f"{package}.scan"
    else:
        assert scanners == {}


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_keeps_its_scans_in_scan_py(family: Family) -> None:
    """One scanner protocol: no ``scan_submission`` is defined outside ``scan.py``, and
    the family's own rules (``(pristine, patched, path)`` parts of the shared registry)
    are found by importing ``scan.py`` alone."""
    assert family.package is not None
    folder = ENVS / family.package.rpartition(".")[2]
    defining = sorted(
        p.name
        for p in folder.glob("*.py")
        if "\ndef scan_submission(" in p.read_text(encoding="utf-8")
    )
    assert defining in ([], ["scan.py"]), defining
