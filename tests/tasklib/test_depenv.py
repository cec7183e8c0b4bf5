"""Cached dependency environments: keyed by their specification, built once, read-only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forgegym.tasklib.depenv import (
    cache_root,
    declared_test_dependencies,
    ensure_environment,
    environment_key,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "shapes"


def test_cache_root_kwarg_then_variable_then_home(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("FORGEGYM_CACHE_DIR", str(tmp_path / "env"))
    assert cache_root(tmp_path / "kw") == tmp_path / "kw"
    assert cache_root() == tmp_path / "env"
    monkeypatch.delenv("FORGEGYM_CACHE_DIR")
    assert cache_root() == Path.home() / ".cache" / "forgegym"


def test_declared_dependencies_leave_out_pytest_and_plugins() -> None:
    files = {
        "pyproject.toml": "[project]\ndependencies = ['attrs>=22']\n"
        "[project.optional-dependencies]\ntest = ['pytest>=7', 'pytest-cov', 'hypothesis']\n"
        "docs = ['sphinx']\n",
        "requirements-test.txt": "# comment\nfreezegun==1.5\n-r base.txt\n",
    }
    assert declared_test_dependencies(files) == ["attrs>=22", "freezegun==1.5", "hypothesis"]


def test_a_local_dependency_installs_once_without_an_index(tmp_path) -> None:
    site = ensure_environment(["./vendor/tinyunits"], cache_dir=tmp_path, base=FIXTURE)
    assert site is not None and (site / "tinyunits" / "__init__.py").is_file()
    # Read-only (the sandbox also binds it read-only), and reused: same key, same path.
    assert not os.stat(site / "tinyunits" / "__init__.py").st_mode & 0o222
    assert ensure_environment(["./vendor/tinyunits"], cache_dir=tmp_path, base=FIXTURE) == site
    assert site.parent.name == environment_key(["./vendor/tinyunits"], FIXTURE)
    assert ensure_environment([], cache_dir=tmp_path) is None
    # Built from a copy: the repository is never written (no egg-info, no build/).
    assert not list((FIXTURE / "vendor").rglob("*.egg-info"))
    assert not (FIXTURE / "vendor" / "tinyunits" / "build").exists()


def test_a_dependency_that_cannot_be_installed_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        ensure_environment(["./no-such-dir"], cache_dir=tmp_path, base=tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text("[build-system]\nrequires = [\n")
    with pytest.raises(ValueError, match=r"could not install .*broken"):
        ensure_environment(["./broken"], cache_dir=tmp_path / "cache", base=tmp_path)
    assert not list((tmp_path / "cache" / "envs").glob("*/site"))  # nothing half-built kept


def test_the_projects_own_packages_are_never_in_its_environment(tmp_path) -> None:
    # A dependency that pulls in the task's own project at some release (freezegun ->
    # python-dateutil) would put the pristine code within reach of the code under test.
    site = ensure_environment(
        ["./vendor/tinyunits"], cache_dir=tmp_path, base=FIXTURE, exclude=["tinyunits"]
    )
    assert site is not None and not (site / "tinyunits").exists()
    kept = ensure_environment(["./vendor/tinyunits"], cache_dir=tmp_path, base=FIXTURE)
    assert kept is not None and kept != site and (kept / "tinyunits" / "__init__.py").is_file()
