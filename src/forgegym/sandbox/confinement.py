"""Parent side of the confinement: the minimal root a zygote runs in (bubblewrap), the
trusted files staged into it, and the seccomp program its jobs run under.

Every zygote (and every baseline run) is started as::

    bwrap --unshare-all --uid 65534 --gid 65534 --die-with-parent --new-session
          --clearenv --ro-bind <runtime> ... --ro-bind <stage> <stage>
          --proc /proc --dev /dev --tmpfs /dev/shm --tmpfs /tmp --dir /job --remount-ro /
          -- <python> -I -S -c <boot> ...

so it runs unprivileged (no capabilities) in its own user, PID, IPC, UTS, network,
cgroup and mount namespaces, and its filesystem holds only what ``runtime_binds()``
computes from the real interpreter (the executable, the shared libraries it loads, the
standard library and the ``sys.path`` directories the harness imports from), plus a
*stage*: a directory of copies of the few forgegym modules that run in the child (the
harness, isolation, the trusted setup hooks). forgegym's own source tree (with its data,
templates and references) is never bound; a ``forgegym`` package found in a bound
``site-packages`` is masked with an empty tmpfs.

Per job, the supervisor enters a new user, mount, IPC and PID namespace and mounts a
fresh size-limited tmpfs on ``/job`` for that job's copy of the files (see
``isolation.enter_job_namespaces``); the worker then drops every capability, confines
reads and writes with Landlock and loads :func:`seccomp_program`.

Where bubblewrap or user namespaces are missing the runner still runs, less confined:
:func:`confinement_status` says what is missing and how to get it, environments warn once
(:func:`warn_if_degraded`), and ``strict=True`` / ``FORGEGYM_STRICT=1`` refuses to grade
(:func:`require_confinement`).
"""

from __future__ import annotations

import compileall
import errno
import functools
import os
import py_compile
import shutil
import subprocess
import sys
import sysconfig
import threading
import warnings
from dataclasses import dataclass, field

from . import isolation
from .atomic import write_atomic

__all__ = [
    "ConfinementStatus",
    "SANDBOX_GID",
    "SANDBOX_UID",
    "UnconfinedError",
    "add_readonly_dirs",
    "bwrap_argv",
    "bwrap_path",
    "confinement_status",
    "require_confinement",
    "runtime_binds",
    "seccomp_program",
    "stage_module",
    "stage_trusted",
    "strict_from_env",
    "warn_if_degraded",
]

SANDBOX_UID = 65534  # nobody
SANDBOX_GID = 65534  # nogroup

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../forgegym
_SANDBOX_DIR = os.path.dirname(os.path.abspath(__file__))

#: Syscalls a job may not make (Docker's default profile denies these; keyrings, ptrace,
#: mounts, namespaces, module loading, clocks, kexec, BPF, perf, userfaultfd, io_uring).
DENIED_SYSCALLS = (
    "acct",
    "add_key",
    "bpf",
    "chroot",
    "clock_adjtime",
    "clock_settime",
    "create_module",
    "delete_module",
    "finit_module",
    "fsconfig",
    "fsmount",
    "fsopen",
    "fspick",
    "get_kernel_syms",
    "get_mempolicy",
    "init_module",
    "io_uring_enter",
    "io_uring_register",
    "io_uring_setup",
    "ioperm",
    "iopl",
    "kcmp",
    "kexec_file_load",
    "kexec_load",
    "keyctl",
    "lookup_dcookie",
    "mbind",
    "mount",
    "mount_setattr",
    "move_mount",
    "move_pages",
    "name_to_handle_at",
    "nfsservctl",
    "open_by_handle_at",
    "open_tree",
    "perf_event_open",
    "pidfd_getfd",
    "pivot_root",
    "process_madvise",
    "process_vm_readv",
    "process_vm_writev",
    "ptrace",
    "query_module",
    "quotactl",
    "quotactl_fd",
    "reboot",
    "request_key",
    "set_mempolicy",
    "setns",
    "settimeofday",
    "swapoff",
    "swapon",
    "syslog",
    "sysfs",
    "umount2",
    "unshare",
    "uselib",
    "userfaultfd",
    "ustat",
    "vhangup",
)

_NAMESPACE_FLAGS = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


class UnconfinedError(RuntimeError):
    """Strict mode: the sandbox's confinement is incomplete on this machine."""


# ============================================================================ seccomp


@functools.lru_cache(maxsize=1)
def seccomp_program() -> bytes | str:
    """The job's seccomp filter as classic BPF (built with libseccomp through
    ``pyseccomp``): everything allowed except :data:`DENIED_SYSCALLS` (EPERM),
    ``clone`` with any namespace flag (EPERM) and ``clone3`` (ENOSYS, so libc falls back
    to ``clone``, whose flags a filter can inspect). A str is the reason it is missing."""
    try:
        import pyseccomp as sc
    except ImportError:
        return "pyseccomp is not installed (pip install pyseccomp; it needs libseccomp2)"
    try:
        filt = sc.SyscallFilter(sc.ALLOW)
        for name in DENIED_SYSCALLS:
            try:
                filt.add_rule(sc.ERRNO(errno.EPERM), name)
            except (ValueError, RuntimeError, OSError):
                continue  # not a syscall on this architecture
        for flag in _NAMESPACE_FLAGS:
            filt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        # TIOCSTI / TIOCLINUX push input into a terminal: never needed by a test.
        filt.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.EQ, 0x5412))
        filt.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.EQ, 0x541C))
        r, w = os.pipe()
        try:
            with os.fdopen(w, "wb") as fw:
                filt.export_bpf(fw)
            with os.fdopen(r, "rb") as fr:
                data = fr.read()
        finally:
            pass
    except Exception as exc:  # noqa: BLE001 - libseccomp missing or unusable
        return f"libseccomp unusable: {type(exc).__name__}: {exc}"
    if not data or len(data) % 8:
        return "libseccomp exported an empty program"
    return data


# ============================================================================ the minimal root


def bwrap_path() -> str | None:
    """The bubblewrap executable, or None."""
    found = shutil.which("bwrap") or (
        "/usr/bin/bwrap" if os.path.exists("/usr/bin/bwrap") else None
    )
    return found


#: Top-level modules the sandbox child imports from outside the standard library: pytest
#: and what it imports (packaging, iniconfig, pluggy, the ``py`` shim; pygments when
#: installed, for its optional highlighting).
HARNESS_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments")


def _stdlib_dirs() -> list[str]:
    """The standard library's folders (``lib-dynload`` included) of the base interpreter."""
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    paths = sysconfig.get_paths(vars=base)
    return [p for k in ("stdlib", "platstdlib") if (p := paths.get(k)) and os.path.isdir(p)]


def harness_package_paths() -> list[str]:
    """The files and folders of :data:`HARNESS_PACKAGES` as installed for this interpreter,
    with their ``.dist-info`` metadata (absolute paths; the stdlib's own are not listed)."""
    import importlib.metadata
    import importlib.util

    stdlib = {os.path.realpath(p) for p in _stdlib_dirs()}
    paths: list[str] = []
    for name in HARNESS_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        location = (
            list(spec.submodule_search_locations)[0]
            if spec.submodule_search_locations
            else spec.origin
        )
        if os.path.dirname(os.path.realpath(location)) in stdlib:
            continue
        paths.append(os.path.abspath(location))
    for dist_name in ("pytest", "pluggy", "iniconfig", "packaging", "pygments"):
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            continue
        info = getattr(dist, "_path", None)
        if info is not None and os.path.isdir(str(info)):
            paths.append(os.path.abspath(str(info)))
    return paths


def _has_forgegym(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, "forgegym"))


@functools.lru_cache(maxsize=1)
def runtime_binds() -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """``((source, dest), ...)`` read-only binds of the runtime, and the directories to
    mask (a bound ``site-packages`` that holds a ``forgegym`` package).

    Computed from the running interpreter: its real executable, the shared-library
    directories its loader and extension modules use, the standard library and
    lib-dynload, and every existing ``sys.path`` directory except forgegym's own source
    tree (which holds data, templates and references)."""
    src_root = os.path.dirname(_PKG_DIR)
    wanted: list[str] = []
    exe = os.path.realpath(sys.executable)
    wanted.append(exe)
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    ldlib = sysconfig.get_config_var("LDLIBRARY") or ""
    if libdir and ldlib and os.path.exists(os.path.join(libdir, ldlib)):
        for name in os.listdir(libdir):
            if name.startswith(ldlib.split(".so")[0] + ".so"):
                wanted.append(os.path.join(libdir, name))
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for d in ("/lib64", "/usr/lib64", "/lib32"):
        wanted.append(d)
    if multiarch:
        wanted += [f"/usr/lib/{multiarch}", f"/lib/{multiarch}"]
    # System data a test may rely on: time zones (TZ=...) and compiled locales (LANG=...).
    wanted += ["/usr/share/zoneinfo", "/usr/lib/locale"]
    # The dynamic loader's cache: how a libpython outside the default paths is found.
    wanted += ["/etc/ld.so.cache"]
    # The base interpreter's standard library (in a virtual environment ``platstdlib``
    # is the environment's own lib folder, which holds its site-packages).
    wanted.extend(_stdlib_dirs())
    # Of the other ``sys.path`` directories (site-packages, the caller's script folder,
    # its working directory, a user's folders) only the harness's own packages: never a
    # whole directory, which would put whatever else is installed there (the task's own
    # project at the bank's version, issue 36) or lies beside the caller's script within
    # reach of the code under test. The project's dependencies come from its own cached
    # environment (``add_readonly_dirs``).
    del src_root
    wanted.extend(harness_package_paths())
    # The base interpreter's own site-packages lies inside its standard library folder:
    # masked with an empty tmpfs, the harness's packages bound back into it.
    masks = [
        os.path.join(d, sub)
        for d in _stdlib_dirs()
        for sub in ("site-packages", "dist-packages")
        if os.path.isdir(os.path.join(d, sub))
    ]
    binds: list[tuple[str, str]] = []
    seen: set[str] = set()
    for dest in wanted:
        if not os.path.lexists(dest):
            continue
        src = os.path.realpath(dest)
        if not os.path.exists(src) or dest in seen:
            continue
        masked = any(dest.startswith(m + os.sep) for m in masks)
        if not masked and any(dest.startswith(d + os.sep) for d in seen):
            continue
        seen.add(dest)
        binds.append((src, dest))
    return tuple(binds), tuple(masks)


# Directories outside the runtime that jobs may read (a user's repository's cached test
# dependencies): bound read-only into every sandbox started after they were added. The
# generation counts additions, so a pool knows which of its zygotes predate one.
_EXTRA_LOCK = threading.Lock()
_EXTRA_RO: dict[str, None] = {}
_EXTRA_GENERATION = [0]


def add_readonly_dirs(paths: list[str]) -> int:
    """Bind the directories ``paths`` (absolute, existing) read-only into every sandbox
    started from now on; returns the generation that includes them (zygotes of an older
    generation cannot see them). Only the trusted parent calls this, for directories it
    built itself (never a path an agent chose)."""
    with _EXTRA_LOCK:
        for path in paths:
            real = os.path.realpath(path)
            if not os.path.isabs(path) or not os.path.isdir(real):
                raise ValueError(f"add_readonly_dirs: {path!r} is not an existing directory")
            if path not in _EXTRA_RO:
                _EXTRA_RO[path] = None
                _EXTRA_GENERATION[0] += 1
        return _EXTRA_GENERATION[0]


def readonly_generation() -> int:
    """The current generation of :func:`add_readonly_dirs`."""
    return _EXTRA_GENERATION[0]


def sandbox_python() -> str:
    """The interpreter path inside the sandbox."""
    return os.path.realpath(sys.executable)


def sandbox_path() -> list[str]:
    """``sys.path`` inside the sandbox (the bound directories, and the directories that
    hold a bound harness package, in the parent's order)."""
    binds, _ = runtime_binds()
    dests = {d for _, d in binds}
    out = []
    for entry in sys.path:
        if not entry or entry == ".":
            continue
        entry = os.path.abspath(entry)
        if (
            entry in dests
            or any(entry.startswith(d + os.sep) for d in dests if os.path.isdir(d))
            or any(os.path.dirname(d) == entry for d in dests)
        ):
            out.append(entry)
    return out


def bwrap_argv(stage: str, command: list[str], env: dict[str, str]) -> list[str]:
    """The bubblewrap command line that runs ``command`` in the minimal root."""
    bwrap = bwrap_path()
    assert bwrap is not None
    argv = [
        bwrap,
        "--unshare-all",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_GID),
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    binds, masks = runtime_binds()
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--tmpfs", "/tmp"]
    # Binds outside the masks, then the masks (empty tmpfs), then the binds inside them.
    inside = [(src, dest) for src, dest in binds if any(dest.startswith(m + os.sep) for m in masks)]
    for src, dest in binds:
        if (src, dest) not in inside:
            argv += ["--ro-bind", src, dest]
    for mask in masks:
        argv += ["--tmpfs", mask]
    for src, dest in inside:
        argv += ["--ro-bind", src, dest]
    for mask in masks:
        argv += ["--remount-ro", mask]
    with _EXTRA_LOCK:
        # A folder removed since it was added (a temporary dependency cache a caller
        # deleted) is forgotten: bwrap refuses to start on a missing bind source, and a
        # job that needs the folder adds it again (add_readonly_dirs checks it exists).
        for gone in [p for p in _EXTRA_RO if not os.path.isdir(os.path.realpath(p))]:
            del _EXTRA_RO[gone]
        extra = list(_EXTRA_RO)
    for path in extra:
        argv += ["--ro-bind", os.path.realpath(path), path]
    argv += ["--ro-bind", stage, stage, "--dir", isolation.JOB_DIR, "--remount-ro", "/"]
    argv += ["--chdir", "/", "--", *command]
    return argv


# ============================================================================ the stage


_STAGE_LOCK = threading.Lock()


def stage_trusted(stage: str) -> None:
    """Copy the forgegym modules that run in the child (``forgegym/sandbox/*.py``) into
    ``stage`` and write the job seccomp program next to them. Only code: no data."""
    dest = os.path.join(stage, "forgegym", "sandbox")
    os.makedirs(dest, exist_ok=True)
    for name in sorted(os.listdir(_SANDBOX_DIR)):
        if name.endswith(".py"):
            shutil.copyfile(os.path.join(_SANDBOX_DIR, name), os.path.join(dest, name))
    prog = seccomp_program()
    if isinstance(prog, bytes):
        with open(os.path.join(stage, "seccomp.bpf"), "wb") as f:
            f.write(prog)
    # Bytecode now: inside, the stage is read-only, so every zygote and every baseline
    # run would otherwise compile the harness from source.
    compileall.compile_dir(dest, quiet=1)
    for root, _dirs, files in os.walk(stage):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)


def stage_module(stage: str, module: str) -> None:
    """Make the trusted module ``module`` (``forgegym.x.y``) importable in the child by
    copying its one source file into the stage (a setup hook or call driver must be a
    self-contained module: nothing else of its package is copied)."""
    if not module.startswith("forgegym.") or module.startswith("forgegym.sandbox."):
        return
    parts = module.split(".")[1:]
    if not parts or any(not p.isidentifier() for p in parts):
        return
    src = os.path.join(_PKG_DIR, *parts) + ".py"
    if not os.path.isfile(src):
        return
    dest = os.path.join(stage, "forgegym", *parts) + ".py"
    with _STAGE_LOCK:
        if os.path.exists(dest):
            return
        with open(src, "rb") as handle:
            write_atomic(dest, handle.read())
        py_compile.compile(dest, quiet=1)
        d = os.path.dirname(dest)
        while d != stage and d.startswith(stage):
            os.chmod(d, 0o755)
            d = os.path.dirname(d)
        for root, dirs, files in os.walk(os.path.dirname(dest)):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)


# ============================================================================ status


@dataclass(frozen=True)
class ConfinementStatus:
    """Whether the full confinement is available here, and what is missing."""

    active: bool
    bwrap: str | None
    missing: tuple[str, ...] = field(default_factory=tuple)
    #: bubblewrap and per-job namespaces work: runs use them even when Landlock or
    #: seccomp is missing (partial confinement beats none; ``active`` stays False).
    namespaces: bool = False

    def describe(self) -> str:
        if self.active:
            return f"bubblewrap ({self.bwrap}), user namespaces, Landlock and seccomp available"
        return "; ".join(self.missing)


def _probe_bwrap(bwrap: str) -> str | None:
    """Run a trivial command in the same kind of sandbox; None when it works."""
    binds, _ = runtime_binds()
    argv = [
        bwrap,
        "--unshare-all",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_GID),
        "--die-with-parent",
        "--clearenv",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
        "--dir",
        isolation.JOB_DIR,
    ]
    for src, dest in binds:
        argv += ["--ro-bind", src, dest]
    # The sandbox folder as a bare package (its __init__ is not run; isolation imports
    # its sibling modules relatively), as the runners' bootstrap registers it.
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('fgsandbox')\n"
        "pkg.__path__ = [sys.argv[1]]\n"
        "sys.modules['fgsandbox'] = pkg\n"
        "from fgsandbox import isolation\n"
        "r = isolation.enter_job_namespaces(1)\n"
        "print(r or 'ok')\n"
    )
    argv += [
        "--ro-bind",
        _SANDBOX_DIR,
        "/fg",
        "--",
        sandbox_python(),
        "-I",
        "-S",
        "-c",
        code,
        "/fg",
    ]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    out = proc.stdout.strip()
    if proc.returncode != 0:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"bubblewrap cannot create the sandbox here: {err}"
    if out != "ok":
        return f"nested per-job namespaces unavailable in the sandbox: {out}"
    return None


_STATUS: ConfinementStatus | None = None
_STATUS_LOCK = threading.Lock()


def confinement_status(refresh: bool = False) -> ConfinementStatus:
    """Probe (once, cached) whether runs will be fully confined on this machine."""
    global _STATUS
    with _STATUS_LOCK:
        if _STATUS is not None and not refresh:
            return _STATUS
        missing: list[str] = []
        bwrap = bwrap_path() if sys.platform == "linux" else None
        namespaces = False
        if sys.platform != "linux":
            missing.append(f"not Linux ({sys.platform}): no namespaces, Landlock or seccomp")
        elif bwrap is None:
            missing.append(
                "bubblewrap is not installed (apt-get install -y bubblewrap, "
                "or dnf install bubblewrap)"
            )
        else:
            why = _probe_bwrap(bwrap)
            namespaces = why is None
            if why:
                missing.append(
                    why + " (enable unprivileged user namespaces: "
                    "sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces>0, "
                    "or on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0)"
                )
        abi = isolation.landlock_abi()
        if abi < 1:
            missing.append(
                "Landlock is unavailable (a Linux >= 5.13 kernel booted with "
                "lsm=...,landlock): reads and writes are not confined per job"
            )
        prog = seccomp_program()
        if isinstance(prog, str):
            missing.append(f"seccomp filter unavailable: {prog}")
        _STATUS = ConfinementStatus(not missing, bwrap, tuple(missing), namespaces)
        return _STATUS


def strict_from_env() -> bool:
    return os.environ.get("FORGEGYM_STRICT", "").strip().lower() in ("1", "true", "yes", "on")


_WARNED = False


def warn_if_degraded() -> None:
    """Warn once per process when runs will not be fully confined."""
    global _WARNED
    if _WARNED:
        return
    _WARNED = True
    status = confinement_status()
    if not status.active:
        warnings.warn(
            "forgegym sandbox is not fully confined on this machine: "
            + status.describe()
            + ". Run `forgegym doctor` for details; pass strict=True or set "
            "FORGEGYM_STRICT=1 to refuse grading instead.",
            RuntimeWarning,
            stacklevel=3,
        )


def require_confinement(strict: bool | None = None) -> None:
    """Raise :class:`UnconfinedError` in strict mode when confinement is incomplete."""
    if strict is None:
        strict = strict_from_env()
    if not strict:
        return
    status = confinement_status()
    if not status.active:
        raise UnconfinedError(
            "strict mode: refusing to grade without full confinement: "
            + status.describe()
            + " (see `forgegym doctor`)"
        )


# ============================================================================ doctor
