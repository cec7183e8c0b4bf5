"""A trusted probe run as an ordinary job (a ``CallJob`` target) so that ``forgegym
doctor`` reports what a job really gets, not what the parent hopes it gets.

Standard library only: it runs inside the sandbox, staged like the harness.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
from typing import Any

__all__ = ["report"]

_SYS_KEYCTL = 250  # x86_64
_SYS_PTRACE = 101  # x86_64


def _status() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                out[key] = value.strip()
    except OSError:
        pass
    return out


def _denied(fn: Any) -> str:
    """'denied (<errno>)', 'missing', or 'ALLOWED'."""
    try:
        fn()
    except FileNotFoundError:
        return "missing"
    except PermissionError as exc:
        return f"denied ({errno.errorcode.get(exc.errno or 0, exc.errno)})"
    except OSError as exc:
        return f"error ({errno.errorcode.get(exc.errno or 0, exc.errno)})"
    return "ALLOWED"


def _read(path: str) -> None:
    with open(path, "rb") as f:
        f.read(1)


def _write(path: str) -> None:
    with open(path, "w") as f:
        f.write("x")


def _syscall_errno(number: int, *args: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    res = libc.syscall(number, *[ctypes.c_long(a) for a in args])
    return 0 if res >= 0 else ctypes.get_errno()


def _mount(path: str) -> tuple[str, str]:
    """(fstype, options) of the mount at ``path`` from /proc/self/mountinfo."""
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) > 4 and fields[4] == path:
                    rest = right.split()
                    return rest[0], rest[2] if len(rest) > 2 else ""
    except OSError:
        pass
    return "", ""


def report(host_paths: list[str] | None = None) -> dict[str, Any]:
    """What this job can see and do, as JSON-plain values."""
    status = _status()
    out: dict[str, Any] = {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "euid": os.geteuid(),
        "cap_eff": status.get("CapEff", "?"),
        "cap_bnd": status.get("CapBnd", "?"),
        "no_new_privs": status.get("NoNewPrivs", "?"),
        "seccomp": status.get("Seccomp", "?"),
        "pid": os.getpid(),
        "cwd": os.getcwd(),
        "hostname": socket.gethostname(),
        "interfaces": [name for _, name in socket.if_nameindex()],
        "env_keys": sorted(os.environ),
        "namespaces": {},
    }
    for ns in ("user", "mnt", "ipc", "pid", "net", "uts"):
        try:
            out["namespaces"][ns] = os.readlink(f"/proc/self/ns/{ns}")
        except OSError as exc:
            out["namespaces"][ns] = f"error {exc.errno}"
    out["keyctl"] = errno.errorcode.get(_syscall_errno(_SYS_KEYCTL, 0, -3, 0), "ok")
    out["ptrace"] = errno.errorcode.get(_syscall_errno(_SYS_PTRACE, 16, 1, 0, 0), "ok")
    out["list_root"] = _denied(lambda: os.listdir("/"))
    out["read_pid1"] = _denied(lambda: _read("/proc/1/cmdline"))
    out["host_paths"] = {p: _denied(lambda p=p: _read(p)) for p in (host_paths or [])}
    fstype, options = _mount(os.getcwd())
    out["job_mount"] = {"fstype": fstype, "options": options}
    try:
        st = os.statvfs(os.getcwd())
        out["job_mount"]["size_bytes"] = st.f_blocks * st.f_frsize
    except OSError:
        pass
    probe = os.path.join(os.getcwd(), "probe.txt")
    out["write_job"] = _denied(lambda: _write(probe))
    out["write_tmp"] = _denied(lambda: _write("/tmp/forgegym-probe"))
    # A pristine file the doctor's job carries (design note 004, D11): it and its folder
    # must stay as they are, while a new file beside it is writable.
    folder = os.path.join(os.getcwd(), "pristine")
    out["write_pristine"] = _denied(lambda: _write(os.path.join(folder, "fixture.txt")))
    out["move_pristine"] = _denied(lambda: os.rename(folder, folder + "-moved"))
    out["write_beside_pristine"] = _denied(lambda: _write(os.path.join(folder, "new.txt")))
    return out
