"""The runtime policy of a sandbox child: PEP 578 audit hooks against introspection.

Code under test runs in the same interpreter as the trusted harness that reports its
results, so the harness must keep it from reaching the reporter's state: frames (and
through them every local of pytest and the harness), the garbage collector's object
graph, raw memory (``ctypes``, ``/proc/self/mem``), the inherited file descriptors, and
the ability to run code that no static scan saw (``exec``/``compile`` of strings,
``marshal``, code-object surgery). :func:`install` adds an audit hook (which Python code
cannot remove: ``sys.addaudithook`` has no inverse) that refuses those capabilities when
they originate from *untrusted* code.

Untrusted code is any frame whose file is not a real file under a trusted root (the
standard library, the packages the harness imports, forgegym's sandbox) or that lies in
the job's working directory: the workspace's modules and tests, and code compiled from
strings (``<string>``, ``<timeit-src>``, ...). Whether an event originates from untrusted
code is decided in the hook itself by walking the calling frames from the event up to the
worker's base frame:

* *stack* rules (object walks, raw memory, tracing, forking, writes to trusted classes and
  functions, ``/proc`` and inherited fds): refused when any untrusted frame is on the
  stack, or always (``sys.settrace``, ``sys._current_frames``, ``gc.get_objects``...).
* *origin* rules (getting a frame, ``exec``/``compile``): refused when the frames from the
  event up to the first untrusted one contain no *sanitizer*, a trusted function known to
  consume frames or compile sources without handing them back (``collections.namedtuple``
  reads its caller's module name; the import system compiles module files; pytest's
  assertion rewriter compiles test files). So ``inspect.currentframe()`` and
  ``traceback.walk_stack`` called by a test are refused, while ``logging``, ``typing``,
  ``enum``, ``warnings``, pytest itself and the import system keep working.

A refused capability ends the worker at once (:data:`VIOLATION_EXIT`, with one line on
stderr): an exception could be caught and the attempt retried another way, an exit cannot.
Every run of the job therefore reads as crashed, i.e. failed.

Standard library only; imported by the harness before any workspace code exists.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import types
from collections.abc import Iterable
from typing import Any

__all__ = ["VIOLATION_EXIT", "deny_signal_handlers", "install", "trusted_roots"]

#: Exit status of a worker that attempted a refused capability.
VIOLATION_EXIT = 75

_TRUSTED_MODULE_PREFIXES = ("_pytest", "pytest", "pluggy", "forgegym", "iniconfig", "_hashlib")

#: Refused whenever the policy is active, whoever asks (nothing trusted needs them).
_ALWAYS = frozenset(
    {
        "sys.setprofile",
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.addaudithook",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "subprocess.Popen",
        "pty.spawn",
        "sys.remote_exec",
        "sys.monitoring.register_callback",
        "cpython.run_command",
        "cpython.run_file",
        "cpython.run_module",
        "cpython.run_startup",
        "cpython.run_interactivehook",
    }
)
#: Refused when the frames from the event up to untrusted code hold no sanitizer.
_ORIGIN = frozenset(
    {
        "sys._getframe",
        "sys._getframemodulename",
        "compile",
        "exec",
        "marshal.loads",
        "marshal.load",
        "code.__new__",
        "function.__new__",
    }
)
#: ``object.__getattr__`` names that hand out frames.
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
#: Function attributes whose writes change what trusted code does.
_FUNCTION_ATTRS = frozenset({"__code__", "__globals__", "__defaults__", "__kwdefaults__"})
_WATCHED = _ALWAYS | _ORIGIN | {"object.__getattr__", "object.__setattr__", "object.__delattr__"}
_WATCHED = _WATCHED | {"sys.settrace"}
#: The one module allowed to install a trace function (the harness's test watch).
_WATCH_FILE = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "watch.py"))
_WATCHED = _WATCHED | {"open", "os.symlink", "os.link"}
_SUSPECT = ("/proc", "/dev", "/sys", "..")
_FORBIDDEN_PATHS = ("/proc", "/dev/fd", "/dev/mem", "/dev/kmem", "/dev/port", "/sys/kernel")

# Sanitizers: (file suffix, None = every function | frozenset of *excluded* leaky names).
_SANITIZERS: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("/collections/__init__.py", None),
    ("/typing.py", None),
    ("/enum.py", None),
    ("/warnings.py", None),
    ("/dataclasses.py", None),
    ("/ast.py", None),
    ("/linecache.py", None),
    ("/logging/__init__.py", frozenset({"<lambda>", "currentframe"})),
    ("/traceback.py", frozenset({"walk_stack", "walk_tb", "_walk_tb_with_full_positions"})),
    (
        "/inspect.py",
        frozenset(
            {
                "currentframe",
                "stack",
                "trace",
                "getouterframes",
                "getinnerframes",
                "getgeneratorlocals",
                "getcoroutinelocals",
                "getasyncgenlocals",
                "getframeinfo",
                "_getframe",
            }
        ),
    ),
    ("/asyncio/base_tasks.py", frozenset({"_task_get_stack"})),
    ("/asyncio/", frozenset({"get_stack", "_task_get_stack"})),
    ("<frozen importlib._bootstrap_external>", None),
    ("<frozen importlib._bootstrap>", None),
    ("/importlib/", None),
    ("/_pytest/_code/", frozenset()),  # hands frames out: pass-through, not a sanitizer
    ("/_pytest/monkeypatch.py", frozenset()),  # writes what its caller asks
    ("/_pytest/", None),
    ("/pluggy/", None),
)


_ROOTS: list[tuple[str, ...]] = []  # computed once per interpreter (a zygote warms it)


def trusted_roots(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """Directories whose files are trusted: the standard library, the packages the
    harness runs (pytest, pluggy, iniconfig) and forgegym's sandbox package."""
    extra = tuple(extra)
    if _ROOTS and not extra:
        return _ROOTS[0]
    roots: list[str] = []
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib"):
        if paths.get(key):
            roots.append(paths[key])
    import importlib.util

    for name in ("_pytest", "pytest", "pluggy", "iniconfig"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        roots.extend((spec.submodule_search_locations or []) if spec else [])
    roots.append(os.path.dirname(os.path.abspath(__file__)))
    roots.extend(extra)
    out = []
    for root in roots:
        real = os.path.realpath(root).rstrip(os.sep) + os.sep
        if real not in out:
            out.append(real)
    if not extra and not _ROOTS:
        _ROOTS.append(tuple(out))
    return tuple(out)


def warm() -> None:
    """Zygote warm-up: what every run's :func:`install` and
    :func:`deny_signal_handlers` need, computed once before the forks."""
    trusted_roots()
    _signal_filter()


class _Policy:
    """State of the installed hook (one per worker process)."""

    def __init__(self, workdir: str, base: types.FrameType, roots: tuple[str, ...]) -> None:
        self.workdir = os.path.realpath(workdir).rstrip(os.sep) + os.sep
        self.base = base
        self.roots = roots
        self.inherited_fds = frozenset(_open_fds())
        self.trusted_cache: dict[str, bool] = {}
        self.sanitizer_cache: dict[tuple[str, str], bool] = {}
        self.busy: set[int] = set()
        # The worker's stderr as it is now: pytest's capture later points fd 2 elsewhere.
        self.stderr = os.dup(2)

    # ------------------------------------------------------------ classification
    def trusted(self, filename: str) -> bool:
        cached = self.trusted_cache.get(filename)
        if cached is not None:
            return cached
        if filename.startswith("<frozen "):
            ok = True
        elif not filename.startswith("/"):
            ok = False  # <string>, <timeit-src>, relative names: compiled from text
        else:
            real = _realpath(filename)
            ok = not real.startswith(self.workdir) and any(real.startswith(r) for r in self.roots)
        self.trusted_cache[filename] = ok
        return ok

    def sanitizer(self, code: types.CodeType) -> bool:
        key = (code.co_filename, code.co_name)
        cached = self.sanitizer_cache.get(key)
        if cached is not None:
            return cached
        ok = False
        filename = code.co_filename
        for pattern, leaky in _SANITIZERS:
            if pattern.startswith("<"):
                hit = filename == pattern
            elif pattern.endswith("/"):
                hit = pattern in filename
            else:
                hit = filename.endswith(pattern)
            if hit:  # None: all of it; empty: none of it; else all but the leaky names
                ok = leaky is None or (bool(leaky) and code.co_name not in leaky)
                break
        self.sanitizer_cache[key] = ok
        return ok

    # ------------------------------------------------------------ stack walks
    def untrusted_on_stack(self, frame: types.FrameType | None) -> bool:
        base = self.base
        while frame is not None and frame is not base:
            if not self.trusted(frame.f_code.co_filename):
                return True
            frame = frame.f_back
        return False

    def untrusted_origin(self, frame: types.FrameType | None) -> bool:
        """Untrusted code reached before any sanitizer (walking up from the event)."""
        base = self.base
        while frame is not None and frame is not base:
            code = frame.f_code
            if not self.trusted(code.co_filename):
                return True
            if self.sanitizer(code):
                return False
            frame = frame.f_back
        return False

    # ------------------------------------------------------------ the hook
    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event not in _WATCHED and not event.startswith("ctypes."):
            return
        ident = _get_ident()
        if ident in self.busy:
            return  # our own sys._getframe below
        self.busy.add(ident)
        try:
            refused = self._decide(event, args)
        except BaseException as exc:  # noqa: BLE001 - a policy error refuses
            refused = f"{event} (policy error {type(exc).__name__}: {exc})"
        finally:
            self.busy.discard(ident)
        if refused:
            _violation(refused, self.stderr)

    def _decide(self, event: str, args: tuple[Any, ...]) -> str | None:
        if event in _ALWAYS:
            return event
        frame = _getframe(2)  # 0: _decide, 1: hook, 2: the frame that raised the event
        if event == "sys.settrace":
            # Only the harness's test watch installs a trace function (a trace function
            # is handed frames), and only with no untrusted code on the stack.
            code = frame.f_code if frame is not None else None
            if (
                code is None
                or _realpath(code.co_filename) != _WATCH_FILE
                or self.untrusted_on_stack(frame)
            ):
                return event
            return None
        if event.startswith("ctypes."):  # raw memory: never on behalf of code under test
            return event if self.untrusted_on_stack(frame) else None
        if event in _ORIGIN:
            return event if self.untrusted_origin(frame) else None
        if event == "object.__getattr__":
            name = args[1] if len(args) > 1 else ""
            if name in _FRAME_ATTRS and self.untrusted_origin(frame):
                return f"{event} {name}"
            return None
        if event in ("object.__setattr__", "object.__delattr__"):
            target, name = args[0], args[1] if len(args) > 1 else ""
            if _trusted_object(target, name) and self.untrusted_origin(frame):
                return f"{event} {_describe(target)}.{name}"
            return None
        if event != "open":  # os.symlink, os.link: a link could disguise a path
            return event if self.untrusted_on_stack(frame) else None
        path = args[0] if args else None
        if isinstance(path, int):
            if path in self.inherited_fds and self.untrusted_on_stack(frame):
                return f"open of inherited fd {path}"
            return None
        if not isinstance(path, str | bytes | _PathLike):
            return None
        text = _fsdecode(path)
        if text.startswith("/") and not any(m in text for m in _SUSPECT):
            return None  # absolute, no /proc, /dev, /sys or '..': cheap, no stack walk
        real = _realpath(text)
        if real.startswith(_FORBIDDEN_PATHS) and self.untrusted_on_stack(frame):
            return f"open {real}"
        return None


def _trusted_object(target: Any, name: str) -> bool:
    """Whether writing ``name`` on ``target`` changes trusted behaviour."""
    if isinstance(target, type):
        return str(getattr(target, "__module__", "") or "").startswith(_TRUSTED_MODULE_PREFIXES)
    if isinstance(target, _FunctionType):
        return name in _FUNCTION_ATTRS or str(target.__module__ or "").startswith(
            _TRUSTED_MODULE_PREFIXES
        )
    if name == "__class__":
        return type(target).__module__.startswith(_TRUSTED_MODULE_PREFIXES)
    return False


def _describe(target: Any) -> str:
    try:
        return str(getattr(target, "__qualname__", type(target).__qualname__))[:80]
    except Exception:  # noqa: BLE001
        return "?"


def _open_fds() -> list[int]:
    try:
        return [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def _violation(what: str, fd: int) -> None:
    """Refuse: say what on stderr and end the worker (nothing can catch an ``_exit``)."""
    try:
        _write(fd, f"\nforgegym sandbox policy: refused {what[:200]}\n".encode())
    finally:
        _exit(VIOLATION_EXIT)


# What the hook calls, bound to values: the hook never looks up a module attribute that
# code under test could rebind (``os._exit = ...``), see ``_private_copy``.
_getframe = sys._getframe
_get_ident = __import__("_thread").get_ident
_realpath = os.path.realpath
_fsdecode = os.fsdecode
_write = os.write
_exit = os._exit
_PathLike = os.PathLike
_FunctionType = types.FunctionType
_installed = False


def _private_copy() -> type:
    """``_Policy`` rebuilt on a private globals dict (with a private copy of the
    builtins): the installed hook reads no name from this module's namespace or from
    ``builtins``, both of which code under test can rewrite."""
    import builtins

    namespace = globals()
    private: dict[str, Any] = {"__builtins__": dict(vars(builtins)), "__name__": __name__}

    def rebind(value: Any) -> Any:
        if isinstance(value, types.FunctionType) and value.__globals__ is namespace:
            copy = types.FunctionType(
                value.__code__, private, value.__name__, value.__defaults__, value.__closure__
            )
            copy.__kwdefaults__ = value.__kwdefaults__
            return copy
        return value

    for name, value in namespace.items():
        if not name.startswith("__"):
            private[name] = rebind(value)
    members = {
        name: rebind(value)
        for name, value in vars(_Policy).items()
        if name not in ("__dict__", "__weakref__")
    }
    cls = type("_Policy", (), members)
    private["_Policy"] = cls
    return cls


# ------------------------------------------------------------------ signal handlers

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


def install(workdir: str, base: types.FrameType, extra_roots: Iterable[str] = ()) -> None:
    """Install the policy for this process (once; it cannot be removed). ``base``: the
    frame below which every caller is the trusted harness entry (walks stop there)."""
    global _installed
    if _installed:
        return
    _installed = True
    # The hook is referenced by the interpreter alone: nothing Python can reach holds
    # the policy object (its caches decide what is trusted).
    policy_class = _private_copy()
    sys.addaudithook(policy_class(workdir, base, trusted_roots(extra_roots)).hook)
