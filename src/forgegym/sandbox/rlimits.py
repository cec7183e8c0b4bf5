"""Resource limits of the worker: CPU time, address space, file size, open files,
processes and core dumps, each set hard and soft.

Imported in the child before any model code: standard library only.
"""

from __future__ import annotations

import resource

DEFAULT_MAX_PROCS = 64  # pids.max / RLIMIT_NPROC: bounds fork bombs
DEFAULT_NOFILE = 256
DEFAULT_FILE_SIZE_MB = 64  # RLIMIT_FSIZE: bounds disk writes (pytest capture tmpfiles included)


def apply_rlimits(
    *,
    cpu_s: float | None,
    memory_mb: int | None,
    file_size_mb: int = DEFAULT_FILE_SIZE_MB,
    nofile: int = DEFAULT_NOFILE,
    nproc: int = DEFAULT_MAX_PROCS,
) -> list[str]:
    """Set hard+soft rlimits on the calling process; returns the names of failed ones."""
    failed: list[str] = []
    limits: list[tuple[str, int | None]] = [
        ("RLIMIT_CPU", None if cpu_s is None else max(1, int(cpu_s + 0.999))),
        ("RLIMIT_AS", None if memory_mb is None else memory_mb * 1024 * 1024),
        ("RLIMIT_FSIZE", file_size_mb * 1024 * 1024),
        ("RLIMIT_NOFILE", nofile),
        ("RLIMIT_NPROC", nproc),  # root is exempt in the kernel; the pids cgroup covers it
        ("RLIMIT_CORE", 0),
    ]
    for name, value in limits:
        res = getattr(resource, name, None)
        if res is None or value is None:
            continue
        try:
            _soft, hard = resource.getrlimit(res)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            if name == "RLIMIT_CPU":
                # soft limit -> SIGXCPU; hard (+1 s) -> SIGKILL if SIGXCPU is caught.
                resource.setrlimit(
                    res, (value, value + 1 if hard == resource.RLIM_INFINITY else hard)
                )
            else:
                resource.setrlimit(res, (value, value))
        except (ValueError, OSError):
            failed.append(name)
    return failed
