"""What a fork-server zygote does once for all its runs: import everything a run needs
(warm-up) and set up the isolation its runs share (network namespace, pids cgroup).

Standard library only at import time.
"""

from __future__ import annotations

import contextlib
import importlib
import os

from . import isolation, policy


class _Shared:
    """Isolation a zygote sets up once for all its runs (see ``_zygote_setup``)."""

    def __init__(self, pid: int, cgroup: str | None, netns: str | None) -> None:
        self.pid = pid  # the zygote: a member of ``cgroup``, never killed by a sweep
        self.cgroup = cgroup  # already joined by the zygote; forks inherit it
        self.netns = netns  # None: the zygote is in an empty network namespace


def _preimport() -> None:
    """Zygote warm-up: import everything a run needs so that forks start hot."""
    import pkgutil

    import _pytest
    import pytest  # noqa: F401

    for mod in pkgutil.walk_packages(_pytest.__path__, "_pytest."):
        if mod.name.startswith(("_pytest.pytester", "_pytest._py")):
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(mod.name)
    # faulthandler and readline are imported by pytest.main itself (the faulthandler and
    # capture plugins); readline is a C extension, so loading it per run costs a dlopen.
    # A job compiles every module it imports from source (no bytecode is read): tomllib
    # (pytest reading a pyproject.toml), pickle, _strptime and the idna codec were ~11 ms
    # of a real task's run when compiled there.
    for name in (
        "tomllib",
        "pickle",
        "_strptime",
        "encodings.idna",
        "unittest",
        "unittest.mock",
        "doctest",
        "pdb",
        "decimal",
        "fractions",
        "faulthandler",
        "readline",
        "forgegym.sandbox.hooks",
    ):
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    policy.warm()


def _zygote_setup(max_procs: int, confined: bool = False) -> _Shared:
    """Per-zygote isolation, paid once instead of per run:

    * network: the zygote unshares an empty network namespace (only a down ``lo``) and
      every supervisor and worker it forks inherits it. Runs never overlap in time on one
      zygote (one job at a time, and the previous tree is dead before the next fork), so
      the namespace holds no process, socket or listener of another run; the only state a
      run could leave there is the configuration of that ``lo`` (as root), which gives a
      later run nothing it could not do itself: no route leaves the namespace. Landlock
      (ABI >= 4) denies TCP bind/connect on top.
    * pids cgroup: the zygote joins one cgroup and its forks are born in it (a v1 cgroup
      migration costs ~10 ms per join). ``pids.max`` is ``max_procs + 1`` so the run's
      tree (supervisor, worker, descendants) keeps the same bound of ``max_procs``; after
      every run the cgroup is swept down to the zygote alone before the next one starts.
    """
    # A job must not read the memory of the process that forked it (/proc/<pid>/mem).
    isolation.set_dumpable(False)
    if confined:  # bubblewrap gave us an empty network namespace; per-job PID namespaces
        return _Shared(os.getpid(), None, None)
    cgroup = isolation.cgroup_create(max_procs + 1)
    if cgroup is not None and not isolation.cgroup_join(cgroup):
        isolation.cgroup_remove(cgroup)
        cgroup = None
    netns = isolation.unshare(isolation.CLONE_NEWNET)
    return _Shared(os.getpid(), cgroup, netns)


def _zygote_exit(shared: _Shared) -> None:
    if shared.cgroup and isolation.cgroup_leave(shared.cgroup):
        isolation.cgroup_remove(shared.cgroup)
    os._exit(0)
