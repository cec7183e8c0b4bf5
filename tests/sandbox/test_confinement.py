"""The confinement's parent side: the minimal root's binds, the doctor, degrading loudly."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator

import gymnasium as gym
import pytest

import forgegym
from forgegym.sandbox import confinement, doctor
from forgegym.sandbox.confinement import ConfinementStatus, UnconfinedError
from forgegym.sandbox.runners import ForkServerRunner

PKG = os.path.dirname(os.path.abspath(forgegym.__file__))
ACTIVE = confinement.confinement_status().active


def test_runtime_binds_never_include_forgegym_sources_or_data() -> None:
    binds, masks = confinement.runtime_binds()
    dests = [dest for _, dest in binds]
    assert os.path.realpath(sys.executable) in dests
    for src, dest in binds:
        for path in (src, dest):
            if (PKG + os.sep).startswith(path.rstrip("/") + os.sep):
                # only a site-packages holding an installed copy, and that copy is masked
                assert any(m == PKG or PKG.startswith(m + os.sep) for m in masks), (path, masks)
    # the stdlib is bound, and what sys.path holds inside is only bound directories
    assert any(os.__file__.startswith(d) for d in dests)
    inside = confinement.sandbox_path()
    assert os.path.dirname(PKG) not in inside
    # ... or the folder that holds a bound harness package (site-packages, not bound whole)
    assert all(
        any(p == d or p.startswith(d + os.sep) or os.path.dirname(d) == p for d in dests)
        for p in inside
    )


def test_stage_holds_only_trusted_code(tmp_path) -> None:  # noqa: ANN001
    confinement.stage_trusted(str(tmp_path))
    confinement.stage_module(str(tmp_path), "forgegym.envs.flaky.chaos")
    confinement.stage_module(str(tmp_path), "forgegym.nope.missing")
    files = sorted(
        os.path.relpath(os.path.join(d, f), tmp_path) for d, _, fs in os.walk(tmp_path) for f in fs
    )
    assert "forgegym/envs/flaky/chaos.py" in files
    assert "forgegym/sandbox/harness.py" in files
    assert all(f.endswith((".py", ".pyc")) or f == "seccomp.bpf" for f in files), files
    assert not any("data" in f.split("/") or "templates" in f for f in files), files


@pytest.mark.skipif(not ACTIVE, reason="full confinement unavailable here")
def test_doctor_reports_the_confinement_active() -> None:
    rows = {row.name: row for row in doctor.doctor_report()}
    for name in (
        "bubblewrap",
        "user_namespace",
        "capabilities",
        "mount_namespace",
        "ipc_namespace",
        "pid_namespace",
        "network_namespace",
        "seccomp",
        "read_confinement",
        "landlock",
        "job_tmpfs",
        "pristine_readonly",
    ):
        assert rows[name].active, (name, rows[name].detail)
    assert "65534" in rows["user_namespace"].detail


@pytest.fixture
def degraded(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConfinementStatus]:
    """This machine as if bubblewrap were missing."""
    monkeypatch.setattr(confinement, "bwrap_path", lambda: None)
    monkeypatch.setattr(confinement, "_STATUS", None)
    monkeypatch.setattr(confinement, "_WARNED", False)
    monkeypatch.delenv("FORGEGYM_STRICT", raising=False)
    status = confinement.confinement_status()
    yield status
    monkeypatch.setattr(confinement, "_STATUS", None)


def test_missing_bubblewrap_is_reported_with_the_fix(degraded: ConfinementStatus) -> None:
    assert not degraded.active
    assert "apt-get install -y bubblewrap" in degraded.describe()


def test_degraded_env_warns_once_and_strict_refuses(
    degraded: ConfinementStatus, monkeypatch: pytest.MonkeyPatch
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("Forge/Bugfix-v0")
        env.close()
        env = gym.make("Forge/Bugfix-v0")
        env.close()
    messages = [str(w.message) for w in caught if "not fully confined" in str(w.message)]
    assert len(messages) == 1 and "bubblewrap" in messages[0]
    with pytest.raises(UnconfinedError, match="bubblewrap"):
        gym.make("Forge/Bugfix-v0", strict=True)
    monkeypatch.setenv("FORGEGYM_STRICT", "1")
    with pytest.raises(UnconfinedError):
        gym.make("Forge/Bugfix-v0")
    with pytest.raises(UnconfinedError):
        ForkServerRunner(workers=1)
    with pytest.raises(ValueError, match="strict"):
        gym.make("Forge/Bugfix-v0", strict="yes")


def test_the_runtime_binds_the_harness_packages_not_whole_folders() -> None:
    # Nothing installed beside the harness (the task's own project at the bank's version,
    # an editable install's source folder, the caller's script folder) is in reach: only
    # system libraries, the base standard library and pytest's own packages are bound.
    import sys
    import sysconfig

    from forgegym.sandbox import confinement

    binds, masks = confinement.runtime_binds()
    dests = [dest for _, dest in binds]
    for entry in sys.path:
        if entry and os.path.isdir(entry) and "site-packages" in entry:
            assert entry not in dests, f"{entry} bound whole"
    allowed = set(confinement.harness_package_paths())
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    stdlib = {base["stdlib"], base["platstdlib"]}
    for dest in dests:
        assert (
            dest in allowed
            or dest in stdlib
            or dest.startswith(("/usr/", "/lib", "/etc/"))
            or os.path.realpath(dest) == os.path.realpath(sys.executable)
            or "libpython" in dest
        ), dest
    # The base interpreter's own site-packages lies inside its stdlib folder: masked.
    for folder in stdlib:
        if os.path.isdir(os.path.join(folder, "site-packages")):
            assert os.path.join(folder, "site-packages") in masks


def test_a_dependency_folder_removed_since_is_not_bound_again(tmp_path) -> None:  # noqa: ANN001
    # A caller's temporary dependency cache is bound for its jobs, then deleted: later
    # sandboxes of any project must still start (bwrap refuses a missing bind source).
    site = tmp_path / "cache" / "envs" / "k" / "site"
    site.mkdir(parents=True)
    generation = confinement.add_readonly_dirs([str(site)])
    assert generation == confinement.readonly_generation()
    assert str(site) in confinement.bwrap_argv(str(tmp_path / "stage"), ["true"], {})
    site.rmdir()
    argv = confinement.bwrap_argv(str(tmp_path / "stage"), ["true"], {})
    assert str(site) not in argv
    # needed again: bound again, in a newer generation
    site.mkdir()
    assert confinement.add_readonly_dirs([str(site)]) > generation
    assert str(site) in confinement.bwrap_argv(str(tmp_path / "stage"), ["true"], {})
