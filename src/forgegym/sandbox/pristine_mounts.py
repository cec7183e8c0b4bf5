"""The task's pristine files, read-only to everything a job runs (design note 004, D11).

A verdict of the project's own tests rests on the files they read as well as on the code
they import: a JSON fixture of expected values, a golden output, a test helper imported
late. The runtime policy sees what the worker's code opens, but not what a process that
inherits nothing (D7) writes, and data is never compiled, so D10's check at compile time
does not cover it. The job's copy therefore makes the pristine files themselves
unwritable: in the job's own mount namespace, before the worker exists, every file whose
bytes are the pristine manifest's is bound onto itself read-only (a write, truncation or
mode change is ``EROFS``; an unlink, rename or replacement of a mount point is
``EBUSY``; a hard link crosses mounts, ``EXDEV``), and every folder holding one is bound
onto itself (a mount point cannot be renamed, so a folder of fixtures cannot be moved
aside and rebuilt). The worker drops every capability before any code under test runs,
so nothing in the job can unmount them. New files, and the files the submission changed,
stay writable where they are: tests keep writing beside the pristine files.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterable

from .syscalls import _LIBC

__all__ = ["protect", "release"]

_MS_RDONLY = 0x1
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_REMOUNT = 0x20
_MS_BIND = 0x1000
_MNT_DETACH = 0x2


def _mount(path: str, flags: int) -> None:
    assert _LIBC is not None
    target = path.encode()
    source = target if not flags & _MS_REMOUNT else None
    if _LIBC.mount(source, target, None, ctypes.c_ulong(flags), None) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)


def protect(root: str, pristine: Iterable[str]) -> list[str]:
    """Make the files ``pristine`` (paths relative to ``root``) read-only and pin the
    folders that hold them (``root`` itself is a mount point already). Returns the mount
    points made, in order; raises ``OSError`` naming the path whose mount failed.

    Must run with ``CAP_SYS_ADMIN`` in the mount namespace's user namespace (the job's
    supervisor) and before any code of the job runs: nothing else may hold these paths."""
    if _LIBC is None:
        raise OSError(errno.ENOSYS, "libc not available", root)
    files = sorted({rel for rel in pristine if rel})
    folders: set[str] = set()
    for rel in files:
        parent = os.path.dirname(rel)
        while parent and parent not in folders:
            folders.add(parent)
            parent = os.path.dirname(parent)
    made: list[str] = []
    try:
        # Outer folders first: a bind made later below them is made on the pinned folder.
        for rel in sorted(folders, key=lambda p: (p.count("/"), p)):
            path = os.path.join(root, rel)
            _mount(path, _MS_BIND)
            made.append(path)
        for rel in files:
            path = os.path.join(root, rel)
            _mount(path, _MS_BIND)
            made.append(path)
            _mount(path, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    except OSError:
        release(made)
        raise
    return made


def release(mounts: list[str]) -> str | None:
    """Detach ``mounts`` (as :func:`protect` returned them), innermost first, so that the
    job's copy can be cleared and checked. None, or the first failure."""
    if _LIBC is None:
        return "libc not available" if mounts else None
    failed: str | None = None
    for path in reversed(mounts):
        if _LIBC.umount2(path.encode(), _MNT_DETACH) != 0 and failed is None:
            failed = f"umount {path}: {os.strerror(ctypes.get_errno())}"
    return failed
