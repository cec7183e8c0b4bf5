"""Landlock: confine what the calling process (and its future children) may read, write
and connect to, beneath a list of directories and files (Linux >= 5.13; best effort).

Imported in the child before any model code: standard library only.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

from .syscalls import _LIBC, _errmsg, no_new_privs

# Landlock (include/uapi/linux/landlock.h). Syscall numbers are shared by all arches.
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or a negative errno when unavailable."""
    if _LIBC is None or platform.system() != "Linux":
        return -errno.ENOSYS
    res = _LIBC.syscall(
        _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION
    )
    return int(res) if res >= 0 else -ctypes.get_errno()


def landlock_confine(
    read_dirs: list[str],
    rw_dirs: list[str],
    rw_files: list[str],
    read_files: list[str] = (),  # type: ignore[assignment]
    *,
    deny_tcp: bool = True,
) -> str | None:
    """Confine reads *and* writes of the calling process and its future children: it can
    read, list and execute only beneath ``read_dirs`` (and ``read_files``), and read and
    write only beneath ``rw_dirs`` (and ``rw_files``). Everything else on every filesystem
    is invisible to ``open``. With ABI >= 4 TCP bind/connect are denied too (``deny_tcp``);
    with ABI >= 6 signals and abstract unix sockets are scoped to the sandbox.
    Returns None on success or a reason string; never raises."""
    abi = landlock_abi()
    if abi < 1:
        return f"Landlock unavailable ({_errmsg(-abi)})"
    assert _LIBC is not None
    write = (
        _FS_WRITE_FILE
        | _FS_REMOVE_DIR
        | _FS_REMOVE_FILE
        | _FS_MAKE_CHAR
        | _FS_MAKE_DIR
        | _FS_MAKE_REG
        | _FS_MAKE_SOCK
        | _FS_MAKE_FIFO
        | _FS_MAKE_BLOCK
        | _FS_MAKE_SYM
    )
    read = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
    file_read = _FS_EXECUTE | _FS_READ_FILE
    file_rw = _FS_READ_FILE | _FS_WRITE_FILE
    if abi >= 2:
        write |= _FS_REFER
    if abi >= 3:
        write |= _FS_TRUNCATE
        file_rw |= _FS_TRUNCATE
    if abi >= 5:
        write |= _FS_IOCTL_DEV
        file_rw |= _FS_IOCTL_DEV
    handled = read | write
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4:
        size = 16
        if deny_tcp:
            attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    ruleset = _LIBC.syscall(
        _SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0
    )
    if ruleset < 0:
        return f"landlock_create_ruleset: {_errmsg(ctypes.get_errno())}"
    rules = (
        [(d, read) for d in read_dirs]
        + [(f, file_read) for f in read_files]
        + [(d, read | write) for d in rw_dirs]
        + [(f, file_rw) for f in rw_files]
    )
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # an optional path that does not exist here
            try:
                if not os.path.isdir(path):
                    rights &= file_rw | file_read
                rule = _PathBeneathAttr(rights, fd)
                if (
                    _LIBC.syscall(
                        _SYS_LANDLOCK_ADD_RULE,
                        ruleset,
                        _LANDLOCK_RULE_PATH_BENEATH,
                        ctypes.byref(rule),
                        0,
                    )
                    < 0
                ):
                    return f"landlock_add_rule({path}): {_errmsg(ctypes.get_errno())}"
            finally:
                os.close(fd)
        no_new_privs()
        if _LIBC.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) < 0:
            return f"landlock_restrict_self: {_errmsg(ctypes.get_errno())}"
        return None
    finally:
        os.close(ruleset)
