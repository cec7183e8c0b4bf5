"""The C library, loaded once, and the process-level calls every isolation module uses:
``prctl`` flags (child subreaper, no_new_privs, dumpable) and ``unshare(2)``.

Imported in the child before any model code: standard library only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _errmsg(err: int) -> str:
    return f"{errno.errorcode.get(err, err)}: {os.strerror(err)}"


def _prctl(option: int, arg: int) -> bool:
    if _LIBC is None:
        return False
    return _LIBC.prctl(option, ctypes.c_ulong(arg), 0, 0, 0) == 0


def set_child_subreaper() -> bool:
    """Orphaned descendants are re-parented to us instead of init (so we can sweep them)."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def no_new_privs() -> bool:
    """Forbid gaining privileges via execve (needed by Landlock for non-root)."""
    return _prctl(_PR_SET_NO_NEW_PRIVS, 1)


def unshare(flags: int) -> str | None:
    """``unshare(2)``; returns None on success or a reason string."""
    fn = getattr(os, "unshare", None)  # Python 3.12+
    if fn is not None:
        try:
            fn(flags)
            return None
        except OSError as exc:
            return _errmsg(exc.errno or 0)
    if _LIBC is None:
        return "libc not available"
    if _LIBC.unshare(ctypes.c_int(flags)) == 0:
        return None
    return _errmsg(ctypes.get_errno())


def set_dumpable(flag: bool) -> bool:
    """A non-dumpable process's ``/proc/<pid>`` files (mem, environ, fds) are closed to
    processes of the same uid without CAP_SYS_PTRACE: the zygote and supervisors use it so
    a job cannot read the memory of the process that forked it."""
    return _prctl(_PR_SET_DUMPABLE, 1 if flag else 0)
