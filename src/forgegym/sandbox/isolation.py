"""Limits applied to the child that runs model-written code (Linux; best effort elsewhere).

Process layout of one run (both runners use it)::

    trusted parent ── zygote (fork server) or fresh interpreter
                        └─ supervisor  (setsid, pids cgroup, unshare(NEWNET|NEWPID), subreaper)
                             └─ worker  (PID 1 of the new PID namespace: rlimits, Landlock,
                                         then pytest / calls; model code runs here)

The baseline's supervisor joins a fresh pids cgroup and unshares a network namespace per
run. A zygote does both once for all its runs (``harness._zygote_setup``): it sits in its
own pids cgroup (``pids.max`` = max_procs + 1 for itself, emptied down to the zygote after
every run) and in an empty network namespace that its forks inherit. A zygote runs one job
at a time and the previous tree is dead before the next fork, so nothing of one run is
alive in either when the next starts.

Killing the worker kills every process of its PID namespace (the kernel does it when a
namespace's init dies), including ``setsid()``-ed double-forked descendants. Where PID
namespaces are unavailable the supervisor is a child subreaper and sweeps its descendants
plus the job's pids cgroup. Every feature degrades to "off + reason" and never raises:
``isolation_report()`` (used by ``forgegym doctor``) says what is active here and why not.

This module is imported in the child before any model code, so it uses the standard
library only.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import platform
import resource
import signal
import sys
import time
import uuid
from collections.abc import Collection
from dataclasses import dataclass

__all__ = [
    "CLONE_NEWNET",
    "CLONE_NEWPID",
    "DEFAULT_FILE_SIZE_MB",
    "DEFAULT_MAX_PROCS",
    "DEFAULT_NOFILE",
    "IsolationFeature",
    "apply_rlimits",
    "cgroup_create",
    "cgroup_join",
    "cgroup_kill",
    "cgroup_leave",
    "cgroup_pids",
    "cgroup_remove",
    "cgroup_set_max",
    "isolation_report",
    "landlock_abi",
    "landlock_restrict_writes",
    "no_new_privs",
    "probe",
    "set_child_subreaper",
    "unshare",
]

CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000

DEFAULT_MAX_PROCS = 64  # pids.max / RLIMIT_NPROC: bounds fork bombs
DEFAULT_NOFILE = 256
DEFAULT_FILE_SIZE_MB = 64  # RLIMIT_FSIZE: bounds disk writes (pytest capture tmpfiles included)

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38

# Landlock (include/uapi/linux/landlock.h). Syscall numbers are shared by all arches.
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_WRITE_FILE = 1 << 1
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
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6

_CGROUP_ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")  # v1 pids hierarchy, then v2
_CGROUP_PARENT = "forgegym"


@dataclass(frozen=True)
class IsolationFeature:
    """One isolation feature and whether it is active on this machine."""

    name: str
    active: bool
    detail: str


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _errmsg(err: int) -> str:
    return f"{errno.errorcode.get(err, err)}: {os.strerror(err)}"


# ----------------------------------------------------------------------------- rlimits


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


# ----------------------------------------------------------------------------- process


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


# ----------------------------------------------------------------------------- landlock


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


def landlock_restrict_writes(
    writable_dirs: list[str], writable_files: list[str], *, deny_tcp: bool = True
) -> str | None:
    """Confine the calling process (and its future children) so that it can create, modify
    or delete files only beneath ``writable_dirs`` and write only to ``writable_files``.
    Reads are not restricted. With ABI >= 4 TCP bind/connect are denied too (``deny_tcp``);
    with ABI >= 6 signals and abstract unix sockets are scoped to the sandbox.
    Returns None on success or a reason string; never raises."""
    abi = landlock_abi()
    if abi < 1:
        return f"Landlock unavailable ({_errmsg(-abi)})"
    assert _LIBC is not None
    fs = (
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
    file_rights = _FS_WRITE_FILE
    if abi >= 2:
        fs |= _FS_REFER
    if abi >= 3:
        fs |= _FS_TRUNCATE
        file_rights |= _FS_TRUNCATE
    attr = _RulesetAttr(fs, 0, 0)
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
    try:
        for path, rights in [(d, fs) for d in writable_dirs] + [
            (f, file_rights) for f in writable_files
        ]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a missing optional path (e.g. /dev/null in odd containers)
            try:
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


# ----------------------------------------------------------------------------- cgroups


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


# ----------------------------------------------------------------------------- probe


def _probe_unshare(flags: int) -> str | None:
    """Try ``unshare(flags)`` in a throwaway forked child; None on success."""
    if not hasattr(os, "fork"):
        return "fork unavailable"
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report and leave without running any Python cleanup
        try:
            os.close(r)
            reason = unshare(flags)
            if reason is None and flags & CLONE_NEWPID:
                inner = os.fork()  # the namespace takes effect for our next child
                if inner == 0:
                    os._exit(0 if os.getpid() == 1 else 1)
                _, status = os.waitpid(inner, 0)
                if os.waitstatus_to_exitcode(status) != 0:
                    reason = "child was not PID 1 of the new namespace"
            os.write(w, (reason or "").encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode()
    os.waitpid(pid, 0)
    return out or None


_REPORT: list[IsolationFeature] | None = None


def probe(refresh: bool = False) -> list[IsolationFeature]:
    """Which isolation features work on this machine (cached; forks briefly)."""
    global _REPORT
    if _REPORT is not None and not refresh:
        return _REPORT
    feats: list[IsolationFeature] = []
    linux = platform.system() == "Linux"
    feats.append(
        IsolationFeature(
            "rlimits",
            True,
            "CPU, address space, file size, open files, core=0 (RLIMIT_NPROC does not bind root)"
            if os.geteuid() == 0
            else "CPU, address space, file size, open files, processes, core=0",
        )
    )
    feats.append(IsolationFeature("session", hasattr(os, "setsid"), "own session (setsid)"))
    if linux:
        why = _probe_unshare(CLONE_NEWNET)
        feats.append(
            IsolationFeature(
                "network_namespace",
                why is None,
                "new empty network namespace: no network" if why is None else f"unshare: {why}",
            )
        )
        why = _probe_unshare(CLONE_NEWPID)
        feats.append(
            IsolationFeature(
                "pid_namespace",
                why is None,
                "worker is PID 1 of a new PID namespace: the whole tree dies with it"
                if why is None
                else f"unshare: {why}; falling back to subreaper sweep + cgroup",
            )
        )
        path = cgroup_create()
        if path is not None:
            cgroup_remove(path)
        feats.append(
            IsolationFeature(
                "pids_cgroup",
                path is not None,
                f"per-run pids.max={DEFAULT_MAX_PROCS} under {_CG_BASE}"
                if path is not None
                else "no writable pids cgroup (process count bounded by RLIMIT_NPROC only)",
            )
        )
        abi = landlock_abi()
        feats.append(
            IsolationFeature(
                "landlock",
                abi >= 1,
                f"ABI {abi}: writes confined to the workspace"
                + (", TCP bind/connect denied" if abi >= 4 else "")
                + (", signals scoped" if abi >= 6 else "")
                if abi >= 1
                else f"unavailable ({_errmsg(-abi)})",
            )
        )
        feats.append(
            IsolationFeature(
                "subreaper", _LIBC is not None, "supervisor sweeps orphaned descendants"
            )
        )
    else:
        for name in ("network_namespace", "pid_namespace", "pids_cgroup", "landlock"):
            feats.append(IsolationFeature(name, False, f"not Linux ({sys.platform})"))
    feats.append(
        IsolationFeature("fork_server", hasattr(os, "fork"), "warm zygotes fork one child per run")
    )
    _REPORT = feats
    return feats


def isolation_report() -> list[tuple[str, bool, str]]:
    """``(name, active, detail)`` rows for ``forgegym doctor``."""
    return [(f.name, f.active, f.detail) for f in probe()]
