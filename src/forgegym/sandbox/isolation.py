"""Limits applied to the child that runs model-written code (Linux; best effort elsewhere).

Process layout of one run (both runners use it)::

    trusted parent ── zygote (fork server) or fresh interpreter
                        └─ supervisor  (setsid, pids cgroup, unshare(NEWNET|NEWPID), subreaper)
                             └─ worker  (PID 1 of the new PID namespace: rlimits, Landlock,
                                         then pytest / calls; model code runs here)

The baseline's supervisor joins a fresh pids cgroup and unshares a network namespace per
run. A zygote does both once for all its runs (``zygote._zygote_setup``): it sits in its
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
import os
import platform
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

# Each concern lives in its own module; this one keeps the job's namespaces and copies
# and the feature probe, and re-exports the rest under the names callers import.
from . import cgroups, pristine_mounts
from .capabilities import drop_capabilities
from .cgroups import (
    cgroup_create,
    cgroup_join,
    cgroup_kill,
    cgroup_leave,
    cgroup_pids,
    cgroup_remove,
    cgroup_set_max,
)
from .landlock import landlock_abi, landlock_confine
from .rlimits import DEFAULT_FILE_SIZE_MB, DEFAULT_MAX_PROCS, DEFAULT_NOFILE, apply_rlimits
from .seccomp_loader import load_seccomp
from .syscalls import _LIBC, _errmsg, no_new_privs, set_child_subreaper, set_dumpable, unshare

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
    "no_new_privs",
    "probe",
    "set_child_subreaper",
    "set_dumpable",
    "unshare",
]

CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000


@dataclass(frozen=True)
class IsolationFeature:
    """One isolation feature and whether it is active on this machine."""

    name: str
    active: bool
    detail: str


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
                f"per-run pids.max={DEFAULT_MAX_PROCS} under {cgroups._CG_BASE}"
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
