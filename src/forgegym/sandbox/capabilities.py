"""Linux capabilities: drop every one of them, and read the effective set back.

Imported in the child before any model code: standard library only.
"""

from __future__ import annotations

import ctypes
import platform

from .syscalls import _LIBC, _errmsg


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_SYS_CAPSET = 126 if platform.machine() in ("x86_64", "AMD64") else 91  # x86_64 / aarch64
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4


def drop_capabilities() -> str | None:
    """Drop every capability (effective, permitted, inheritable, ambient, bounding)."""
    if _LIBC is None:
        return "libc not available"
    for cap in range(64):
        if _LIBC.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0:
            break  # EINVAL past the last capability; EPERM if we have none to drop
    _LIBC.prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    if _LIBC.syscall(_SYS_CAPSET, ctypes.byref(header), ctypes.byref(data)) != 0:
        return f"capset: {_errmsg(ctypes.get_errno())}"
    return None


def capabilities_effective() -> int:
    """The calling thread's effective capability mask (from /proc/self/status)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return -1
