"""Registration: the ids Gymnasium knows are exactly the registered families' ids.

The environment contract itself is checked for every family by tests/test_conformance.py (a top-level suite: it spans every family)."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym

import forgegym
from forgegym.family import families
from forgegym.family.registration import env_ids

IDS = sorted(env_ids())


def test_registry_lists_exactly_the_registered_families() -> None:
    by_family = {i: f for f in families() for i in f.env_ids}
    assert set(IDS) == set(by_family) and len(IDS) >= 2
    for env_id in IDS:
        assert env_id in gym.registry
        env = gym.make(env_id)
        try:
            assert type(env.unwrapped) is by_family[env_id].env_cls
            assert env.unwrapped.family == by_family[env_id].name
        finally:
            env.close()


def test_forgegym_envs_packages_register_themselves_once() -> None:
    import pkgutil

    import forgegym.envs

    packages = {m.name for m in pkgutil.iter_modules(forgegym.envs.__path__) if m.ispkg}
    assert {f.name for f in families() if f.name in packages} == packages


def test_make_with_module_prefix_works_without_prior_import() -> None:
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('forgegym:Forge/Bugfix-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(info['family'])\n"
        "env.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("bugfix")


def test_version_is_exposed() -> None:
    assert forgegym.__version__.count(".") == 2
