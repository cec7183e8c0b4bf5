"""Loading a classic-BPF seccomp program (the job's syscall filter, built in the parent
by :func:`forgegym.sandbox.confinement.seccomp_program`) onto the calling process.

Imported in the child before any model code: standard library only.
"""

from __future__ import annotations

import ctypes

from .syscalls import _LIBC, _errmsg, no_new_privs


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def load_seccomp(bpf: bytes) -> str | None:
    """Install a classic-BPF seccomp filter (as exported by libseccomp) on the calling
    process; inherited by every descendant and irremovable. None or a reason string."""
    if _LIBC is None:
        return "libc not available"
    if not bpf or len(bpf) % 8:
        return "empty or malformed seccomp program"
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _SockFprog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_void_p))
    no_new_privs()
    if (
        _LIBC.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0)
        != 0
    ):
        return f"prctl(PR_SET_SECCOMP): {_errmsg(ctypes.get_errno())}"
    return None
