"""The seccomp filter that refuses signal handlers to the worker (and its children).

A Python signal handler is handed the frame that was running when the signal came, so
code under test must not install one (see :func:`deny_signal_handlers`). Part of the
runtime policy (:mod:`.policy` re-exports it); standard library only, imported by the
harness before any workspace code exists.
"""

from __future__ import annotations

import os
from typing import Any

#: (audit arch, rt_sigaction number) per machine.
_SIGACTION = {"x86_64": (0xC000003E, 13), "aarch64": (0xC00000B7, 134)}


def deny_signal_handlers() -> str | None:
    """Refuse, from now on, every ``rt_sigaction`` that installs a handler (a seccomp
    filter on this process and its children; querying stays allowed).

    A Python signal handler receives the frame that was running when the signal came,
    and from it ``f_back``/``f_locals`` of everything below, none of which 3.11 audits;
    ``signal.signal`` raises no audit event either, and a fresh instance of the
    ``_signal`` module gives back an unwrapped ``signal`` function. So code under test
    must not be able to install a handler at all: with this filter ``signal.signal``
    fails with ``PermissionError``. The harness sets what it needs first (``SIGALRM``
    for call timeouts; ``SIGINT`` ignored, so ``asyncio.run`` does not install one).
    Returns ``None`` when active, else why not."""
    import ctypes

    built = _signal_filter()
    if isinstance(built, str):
        return built
    libc, address = built
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
    if libc.prctl(22, 2, address, 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return None


_FILTER: list[Any] = []
_KEEP: list[Any] = []


def _signal_filter() -> Any:
    """``(libc, sock_fprog)`` of the handler-refusing filter, built once; or why not."""
    if _FILTER:
        return _FILTER[0]
    import ctypes
    import platform

    arch = _SIGACTION.get(platform.machine())
    if arch is None:
        _FILTER.append(f"no rt_sigaction number known for {platform.machine()}")
        return _FILTER[0]
    audit_arch, nr = arch

    class SockFilter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_uint16),
            ("jt", ctypes.c_uint8),
            ("jf", ctypes.c_uint8),
            ("k", ctypes.c_uint32),
        ]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    ld, jeq, ret = 0x20, 0x15, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, RET_ERRNO(EPERM)
    program = [
        (ld, 0, 0, 4),  # arch
        (jeq, 0, 7, audit_arch),
        (ld, 0, 0, 0),  # syscall number
        (jeq, 0, 5, nr),
        (ld, 0, 0, 24),  # args[1] (the new action), low word
        (jeq, 0, 2, 0),
        (ld, 0, 0, 28),  # high word
        (jeq, 1, 0, 0),
        (ret, 0, 0, deny),
        (ret, 0, 0, allow),
    ]
    filters = (SockFilter * len(program))(*[SockFilter(*i) for i in program])
    prog = SockFprog(len(program), filters)
    _KEEP.extend((filters, prog))  # the program must outlive this function
    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong
    libc.prctl.argtypes = [ctypes.c_int, ulong, ulong, ulong, ulong]
    _FILTER.append((libc, ctypes.addressof(prog)))
    return _FILTER[0]
