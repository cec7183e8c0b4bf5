"""The pids cgroups that bound a run's process count (v1 ``pids`` hierarchy or v2 with
the pids controller): create, size, join, leave, list, empty and remove.

Imported in the child before any model code: standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Collection

from .rlimits import DEFAULT_MAX_PROCS

_CGROUP_ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")  # v1 pids hierarchy, then v2
_CGROUP_PARENT = "forgegym"


def _cgroup_base() -> str | None:
    for root in _CGROUP_ROOTS:
        procs = os.path.join(root, "cgroup.procs")
        if not os.path.exists(procs):
            continue
        if root == "/sys/fs/cgroup":  # v2: the pids controller must be enabled
            try:
                with open(os.path.join(root, "cgroup.controllers")) as f:
                    if "pids" not in f.read().split():
                        continue
            except OSError:
                continue
        base = os.path.join(root, _CGROUP_PARENT)
        try:
            os.makedirs(base, exist_ok=True)
            if root == "/sys/fs/cgroup":
                with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
                    f.write("+pids")
        except OSError:
            continue
        return base
    return None


_CG_BASE: str | None | bool = False  # False: not looked up yet


def cgroup_create(max_procs: int = DEFAULT_MAX_PROCS) -> str | None:
    """Create a pids cgroup with ``pids.max``; None where not permitted."""
    global _CG_BASE
    if _CG_BASE is False:
        _CG_BASE = _cgroup_base()
    if not _CG_BASE:
        return None
    path = os.path.join(str(_CG_BASE), f"job-{os.getpid()}-{uuid.uuid4().hex[:12]}")
    try:
        os.mkdir(path)
    except OSError:
        return None
    if not cgroup_set_max(path, max_procs):
        cgroup_remove(path)
        return None
    return path


def cgroup_set_max(path: str, max_procs: int) -> bool:
    """Write ``pids.max`` of ``path``."""
    try:
        with open(os.path.join(path, "pids.max"), "w") as f:
            f.write(str(max_procs))
        return True
    except OSError:
        return False


def cgroup_join(path: str) -> bool:
    """Move the calling process into ``path``. On cgroup v1 a migration costs ~10 ms
    (the kernel synchronises RCU), which is why a zygote joins its cgroup once."""
    try:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write("0")
        return True
    except OSError:
        return False


def cgroup_leave(path: str) -> bool:
    """Move the calling process out of ``path`` to the root of its hierarchy (so that
    ``path`` can be removed)."""
    return cgroup_join(os.path.dirname(os.path.dirname(path)))


def cgroup_pids(path: str) -> list[int]:
    """Pids (thread-group ids) currently in the cgroup."""
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


_cgroup_pids = cgroup_pids


def cgroup_kill(path: str, exclude: int | Collection[int] | None = None, rounds: int = 50) -> bool:
    """SIGKILL every process in the cgroup but ``exclude`` (repeatedly: a fork bomb races
    us). True when nothing but ``exclude`` is left."""
    keep = {exclude} if isinstance(exclude, int) else set(exclude or ())
    for _ in range(rounds):
        pids = [p for p in cgroup_pids(path) if p not in keep]
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
    return not [p for p in cgroup_pids(path) if p not in keep]


def cgroup_remove(path: str) -> None:
    """Kill what is left in the cgroup and remove it (best effort)."""
    for _ in range(200):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            cgroup_kill(path, rounds=1)
            time.sleep(0.005)
