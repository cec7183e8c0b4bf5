"""Killing and reaping a run's processes: the supervisor's sweep of its descendants and
the zygote's kill of a run's tree. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from . import isolation


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def _sweep(cgroup: str | None, keep: tuple[int, ...] = ()) -> None:
    """Kill and reap every remaining descendant (we are their subreaper). ``keep``: pids in
    the cgroup that are not ours to kill (the zygote that owns a shared cgroup)."""
    me = os.getpid()
    for _ in range(200):
        if cgroup:
            isolation.cgroup_kill(cgroup, exclude=(me, *keep), rounds=1)
        for child in _children(me):
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return
        time.sleep(0.002)


def _kill_run(worker: int | None, apid: int, pidns: bool, cgroup: str | None) -> None:
    """Kill the worker's tree. With a PID namespace killing the worker (its init) is enough;
    otherwise the cgroup is swept too (the supervisor sweeps its own orphans)."""
    if worker is not None:
        with contextlib.suppress(OSError):
            os.kill(worker, signal.SIGKILL)
    if not pidns:
        if cgroup:
            isolation.cgroup_kill(cgroup, exclude=(apid, os.getpid()), rounds=5)
        if worker is None:
            with contextlib.suppress(OSError):
                os.killpg(apid, signal.SIGKILL)
