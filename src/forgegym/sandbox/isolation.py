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
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import cast

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
    is invisible to ``open``. TCP and scoping as in :func:`landlock_restrict_writes`.
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


# ----------------------------------------------------------------------------- per-job namespaces

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_PRIVATE = 1 << 18
_MS_REC = 0x4000
_MNT_DETACH = 0x2

#: Where a job's fresh copy lives inside a confined zygote (the same path for every run).
JOB_DIR = "/job"
DEFAULT_JOB_TMPFS_MB = 128


#: POSIX shared memory and semaphores (``sem_open``): a fresh tmpfs per confined job.
SHM_DIR = "/dev/shm"


def enter_job_namespaces(size_mb: int = DEFAULT_JOB_TMPFS_MB) -> str | None:
    """In a confined zygote's supervisor: enter a new user, mount, IPC and PID namespace
    owned by this job (same unprivileged uid/gid), and mount a fresh size-limited tmpfs on
    :data:`JOB_DIR`. The next child forked is PID 1 of the job's PID namespace. When the
    job's last process exits, the kernel tears all of it down: every process, every SysV
    IPC object and the tmpfs with whatever is in it. Returns None or a reason string."""
    if _LIBC is None:
        return "libc not available"
    uid, gid = os.getuid(), os.getgid()
    if _LIBC.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID)) != 0:
        return f"unshare: {_errmsg(ctypes.get_errno())}"
    try:
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as exc:
        return f"id maps: {exc}"
    _LIBC.mount(None, b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None)
    opts = f"size={int(size_mb)}m,nr_inodes=16k,mode=0700".encode()
    if (
        _LIBC.mount(
            b"tmpfs", JOB_DIR.encode(), b"tmpfs", ctypes.c_ulong(_MS_NOSUID | _MS_NODEV), opts
        )
        != 0
    ):
        return f"mount tmpfs on {JOB_DIR}: {_errmsg(ctypes.get_errno())}"
    # A /dev/shm of the job's own (it dies with the job's mount namespace, like /job).
    shm_opts = b"size=16m,nr_inodes=1k,mode=1777"
    if os.path.isdir(SHM_DIR):
        _LIBC.mount(
            b"tmpfs", SHM_DIR.encode(), b"tmpfs", ctypes.c_ulong(_MS_NOSUID | _MS_NODEV), shm_opts
        )
    return None


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


def set_dumpable(flag: bool) -> bool:
    """A non-dumpable process's ``/proc/<pid>`` files (mem, environ, fds) are closed to
    processes of the same uid without CAP_SYS_PTRACE: the zygote and supervisors use it so
    a job cannot read the memory of the process that forked it."""
    return _prctl(_PR_SET_DUMPABLE, 1 if flag else 0)


_PR_SET_DUMPABLE = 4


def remove_tree(path: str) -> str | None:
    """Remove ``path`` (a directory tree), making unreadable or read-only directories
    writable first, and verify it is gone. None, or what is left and why."""
    errors: list[str] = []

    def onerror(func: object, name: str, exc_info: object) -> None:
        try:
            parent = os.path.dirname(name)
            os.chmod(parent, 0o700)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, 0o700)
                shutil.rmtree(name)
            else:
                os.unlink(name)
        except OSError as exc:
            errors.append(f"{name}: {exc.strerror}")

    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    shutil.rmtree(path, onerror=onerror)
    if os.path.lexists(path):
        left = errors[:5] or [f"{path} still exists"]
        return "; ".join(left)
    return None


def clear_directory(path: str) -> str | None:
    """Remove everything inside ``path`` (kept) and verify it is empty."""
    problems: list[str] = []
    try:
        names = os.listdir(path)
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    for name in names:
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            why = remove_tree(full)
        else:
            try:
                os.unlink(full)
                why = None
            except OSError as exc:
                why = f"{full}: {exc.strerror}"
        if why:
            problems.append(why)
    with contextlib.suppress(OSError):
        if os.listdir(path):
            problems.append(f"{path} is not empty")
    return "; ".join(problems[:5]) or None


# ----------------------------------------------------------------------------- job copies


def _safe_rel(rel: str) -> str:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"unsafe path in job files: {rel!r}")
    return rel


def write_job_files(
    root: str, files: list[list[object]], pristine: Mapping[str, str] | None = None
) -> list[str]:
    """Write ``[[relpath, base64 content, executable], ...]`` beneath ``root``, never
    following a symlink. Returns the paths written whose bytes are ``pristine``'s (a
    ``{relpath: sha256 hex}`` manifest)."""
    import base64
    import hashlib

    same: list[str] = []
    for rel, data, executable in files:
        rel = _safe_rel(str(rel))
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
        fd = os.open(
            path,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o755 if executable else 0o644,
        )
        content = base64.b64decode(str(data))
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        expected = pristine.get(rel) if pristine else None
        if expected is not None and hashlib.sha256(content).hexdigest() == expected:
            same.append(rel)
    return same


def prepare_job(job: dict[str, object]) -> dict[str, str | None]:
    """Supervisor: make the job's fresh copy and point ``job["workdir"]`` at it.

    Confined (inside a bubblewrap zygote): new user/mount/IPC/PID namespaces for this job
    and a fresh size-limited tmpfs on :data:`JOB_DIR` (the same path for every run).
    Otherwise: a fresh directory under ``job["_jobroot"]``. Returns feature reasons."""
    features: dict[str, str | None] = {}
    files = job.pop("_files", None) or []
    if job.get("_confined"):
        set_dumpable(True)  # our own /proc/self/*_map must stay writable to us
        tmpfs_mb = cast("int | str", job.get("_tmpfs_mb") or DEFAULT_JOB_TMPFS_MB)
        why = enter_job_namespaces(int(tmpfs_mb))
        set_dumpable(False)
        if why is not None:
            raise RuntimeError(f"per-job namespaces: {why}")
        features["pidns"] = None
        features["job_tmpfs"] = None
        root = JOB_DIR
    else:
        import tempfile

        root = tempfile.mkdtemp(prefix="job-", dir=str(job["_jobroot"]))
        os.chmod(root, 0o755)
        features["pidns"] = unshare(CLONE_NEWPID)
        features["job_tmpfs"] = "not confined: a fresh directory on the host's disk"
    manifest = cast("dict[str, str] | None", job.get("pristine"))
    same = write_job_files(root, files, manifest)  # type: ignore[arg-type]
    if job.get("_confined"):
        from . import pristine_mounts  # the probe imports this module alone

        # The pristine files, read-only to everything the job runs (D11); the worker,
        # forked next, gets their names so the policy need not hash them again (D10).
        job["_protected_mounts"] = pristine_mounts.protect(root, same)
        features["pristine_readonly"] = None
    else:
        features["pristine_readonly"] = "not confined: no mount namespace of the job's own"
    job["_pristine_at_start"] = same
    job["workdir"] = root
    return features


def discard_job(job: dict[str, object]) -> str | None:
    """Supervisor, after the job's processes are gone: remove its copy and verify it is
    gone. None, or what was left behind."""
    root = str(job["workdir"])
    if job.get("_confined"):
        # The copy is the job's own tmpfs, in the job's own mount namespace: detaching it
        # takes every read-only bind in it (D11) along in one call, and frees it once
        # nothing holds it (nothing outside the job's namespaces can).
        if _LIBC is not None and _LIBC.umount2(root.encode(), _MNT_DETACH) == 0:
            return None
        from . import pristine_mounts

        mounts = cast("list[str]", job.get("_protected_mounts") or [])
        return pristine_mounts.release(mounts) or clear_directory(root)
    return remove_tree(root)


def confine_worker(job: dict[str, object]) -> dict[str, str | None]:
    """Worker, before any model code: drop capabilities, confine reads and writes to the
    job's copy (plus read-only runtime) with Landlock, load the seccomp program.
    Returns feature -> None (active) or reason."""
    features: dict[str, str | None] = {}
    bpf = b""
    path = job.get("_seccomp")
    if path:
        try:
            with open(str(path), "rb") as f:
                bpf = f.read()
        except OSError as exc:
            features["seccomp"] = f"seccomp program unreadable: {exc}"
    else:
        features["seccomp"] = "no seccomp program (pyseccomp/libseccomp missing)"
    if job.get("_confined"):
        features["capabilities"] = drop_capabilities()
    workdir = str(job["workdir"])
    reads = [str(p) for p in cast("list[object]", job.get("_read") or [])]
    confined = bool(job.get("_confined"))
    # Confined, the job has a fresh /dev/shm of its own (POSIX semaphores and shared
    # memory: a multiprocessing pool) and lives in a network namespace with only a
    # loopback interface, so loopback TCP (a test's local server) reaches nothing outside.
    # Unconfined (host mode) both stay closed.
    shm = [SHM_DIR] if confined and os.path.isdir(SHM_DIR) else []
    features["landlock"] = landlock_confine(
        reads,
        [workdir, *shm],
        [os.devnull, "/dev/zero", "/dev/full"],
        ["/dev/urandom", "/dev/random", "/proc/self"],
        deny_tcp=not confined,
    )
    if bpf:
        features["seccomp"] = load_seccomp(bpf)
    return features


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
