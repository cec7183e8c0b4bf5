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

from .signal_handlers import _signal_filter, deny_signal_handlers

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
        "sys.remote_exec",
        "sys.monitoring.register_callback",
        "cpython.run_command",
        "cpython.run_file",
        "cpython.run_module",
        "cpython.run_startup",
        "cpython.run_interactivehook",
    }
)
#: Starting a process: allowed to trusted code (no untrusted frame on the stack).
_SPAWN = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "subprocess.Popen",
        "pty.spawn",
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
#: Of those, the ones :meth:`_Policy.own_defaults` may let through (never ``__code__``).
_DEFAULTS_ATTRS = frozenset({"__defaults__", "__kwdefaults__"})
#: The standard library's ``subprocess`` (its ``Popen._execute_child`` raises the event).
_SUBPROCESS_FILE = os.path.realpath(os.path.join(sysconfig.get_paths()["stdlib"], "subprocess.py"))
_WATCHED = (
    _ALWAYS | _SPAWN | _ORIGIN | {"object.__getattr__", "object.__setattr__", "object.__delattr__"}
)
_WATCHED = _WATCHED | {"sys.settrace"}
#: The one module allowed to install a trace function (the harness's test watch).
_WATCH_FILE = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "watch.py"))
_WATCHED = _WATCHED | {"open", "os.symlink", "os.link"}
_SUSPECT = ("/proc", "/dev", "/sys", "..")
_FORBIDDEN_PATHS = ("/proc", "/dev/fd", "/dev/mem", "/dev/kmem", "/dev/port", "/sys/kernel")

# Sanitizers: trusted functions that consume frames or compile sources on behalf of their
# caller and hand back only plain results (a module name, a class, a code object compiled
# from a file or from text they built). Each entry is (pattern, entries): ``pattern`` a
# file suffix, a package folder (``/name/``) or a frozen module name; ``entries`` the
# function names that are sanitizers (``None``: every function of a harness package).
#
# An origin event is allowed on behalf of untrusted code only when, walking up from the
# event through trusted frames, a sanitizer is reached before any untrusted frame, and no
# *leaky* frame below it (one that hands frames out: ``traceback.walk_stack``, pytest's
# frame wrappers, any dependency or project function) lies outside the sanitizer's own
# file or package. So a frame-yielding iterator of another module drained by a sanitizer
# or by a stdlib consumer (``collections.Counter``, ``sorted``, ``map`` inside
# ``namedtuple``) launders nothing. Issue 36 measured that laundering against the old
# whole-module list (``collections``, ``traceback``, ``inspect`` whole).
_SANITIZERS: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("/collections/__init__.py", frozenset({"namedtuple"})),
    ("/typing.py", frozenset({"_caller", "_make_nmtuple", "__init__", "__new__"})),
    ("/typing_extensions.py", frozenset({"_caller", "_set_module"})),
    ("/enum.py", frozenset({"_create_", "__call__"})),
    ("/warnings.py", frozenset({"warn", "_is_internal_frame", "_next_external_frame"})),
    ("/dataclasses.py", frozenset({"_create_fn", "_process_class", "dataclass", "wrap"})),
    ("/ast.py", frozenset({"parse", "literal_eval"})),
    ("/linecache.py", None),
    ("/logging/__init__.py", frozenset({"findCaller", "_log", "warn", "warning"})),
    (
        "/traceback.py",
        frozenset(
            {
                "extract_tb",
                "extract_stack",
                "format_exc",
                "format_exception",
                "format_exception_only",
                "format_tb",
                "format_stack",
                "print_exc",
                "print_exception",
                "print_tb",
                "print_stack",
                "print_last",
                "format_list",
                # unittest's assertRaises clears the frames of the traceback it caught
                "clear_frames",
                # TracebackException (logging and unittest format exceptions with it)
                "__init__",
            }
        ),
    ),
    ("/doctest.py", frozenset({"_normalize_module", "_module_relative_path", "testmod"})),
    ("/attr/_make.py", frozenset({"_compile_and_eval", "_linecache_and_compile"})),
    ("<frozen importlib._bootstrap_external>", None),
    ("<frozen importlib._bootstrap>", None),
    ("/importlib/", None),
    ("/_pytest/", None),
    ("/pluggy/", None),
)
#: Parts of a harness package that hand frames out (never sanitizers, and they break the
#: chain to one): pytest's frame and traceback wrappers, its monkeypatch (writes what its
#: caller asks).
_LEAKY_PARTS = ("/_pytest/_code/", "/_pytest/monkeypatch.py")
#: Standard-library functions that hand frames to their caller (file suffix, names).
_LEAKY: tuple[tuple[str, frozenset[str]], ...] = (
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
                "_getframe",
            }
        ),
    ),
    ("/logging/__init__.py", frozenset({"<lambda>", "currentframe"})),
    ("/asyncio/tasks.py", frozenset({"get_stack"})),
    ("/asyncio/base_tasks.py", frozenset({"_task_get_stack"})),
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

    def __init__(
        self,
        workdir: str,
        base: types.FrameType,
        roots: tuple[str, ...],
        pristine: dict[str, str] | None = None,
        at_start: Iterable[str] | None = None,
    ) -> None:
        self.workdir = os.path.realpath(workdir).rstrip(os.sep) + os.sep
        self.base = base
        self.roots = roots
        self.pristine = dict(pristine or {})
        # Files of the workdir once seen untrusted stay untrusted (a module compiled from
        # changed bytes keeps its code objects after the file is restored and reloaded).
        self.tainted: set[str] = set()
        # Workdir files that are the task's pristine bytes as the job starts (before any
        # of its code runs): they must still be when compiled. A process that inherits
        # nothing (D7) could otherwise rewrite a pristine test helper on disk before the
        # tests import it; that module would be untrusted, but it decides the verdict.
        # ``at_start``: the names the supervisor found pristine as it wrote them (it has
        # the bytes; nothing of the job ran since), else hashed here.
        self.pristine_at_start = (
            self._pristine_now()
            if at_start is None
            else frozenset(self.workdir + rel for rel in at_start if rel in self.pristine)
        )
        # The inherited descriptors by what they are, not their number: a number the
        # process closes is reused by its own later pipes (a subprocess's), which are
        # not the report channel.
        self.inherited_fds = {fd: ident for fd in _open_fds() if (ident := _fd_identity(fd))}
        self.trusted_cache: dict[str, bool] = {}
        self.sanitizer_cache: dict[tuple[str, str], tuple[str | None, bool]] = {}
        self.leaky_cache: dict[tuple[str, str], bool] = {}
        # Code reviewed for what it hands back: the standard library, the harness's
        # packages and this sandbox package (not the project's dependencies).
        self.audited = trusted_roots()
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
            if real.startswith(self.workdir):
                ok = self.pristine_bytes(real, None)
            else:
                ok = any(real.startswith(r) for r in self.roots)
        self.trusted_cache[filename] = ok
        return ok

    def pristine_bytes(self, real: str, source: bytes | None) -> bool:
        """Whether the workdir file ``real`` (its bytes on disk, or ``source``: the bytes
        being compiled under its name) is the task's pristine file: provenance by content,
        from the parent's manifest. A file once seen changed stays untrusted."""
        if real in self.tainted or not self.pristine:
            return False
        expected = self.pristine.get(real[len(self.workdir) :])
        if expected is None:
            self.tainted.add(real)
            return False
        if source is None:
            source = _read_bytes(real)
        ok = source is not None and _sha256(source).hexdigest() == expected
        if not ok:
            self.tainted.add(real)
        return ok

    def _pristine_now(self) -> frozenset[str]:
        """The workdir files (real paths) whose bytes are the manifest's right now."""
        if not self.pristine:
            return frozenset()
        same = set()
        for rel, expected in self.pristine.items():
            real = self.workdir + rel
            data = _read_bytes(real)
            if data is not None and _sha256(data).hexdigest() == expected:
                same.add(real)
        return frozenset(same)

    def compiled(self, args: tuple[Any, ...]) -> str | None:
        """A ``compile`` event: record the provenance of what is compiled under a file
        name of the workdir, and refuse text compiled under a trusted file's name whose
        bytes are not that file's (a loader or a ``compile`` call passing its own source
        off as the standard library's or a pristine module's)."""
        source, filename = (tuple(args) + (None, None))[:2]
        if not isinstance(filename, str | bytes) or not filename:
            return None
        name = _fsdecode(filename)
        if not name.startswith("/"):
            return None
        real = _realpath(name)
        data: bytes | None
        if isinstance(source, str):
            data = source.encode("utf-8", "surrogatepass")
        elif isinstance(source, bytes | bytearray | memoryview):
            data = bytes(source)
        else:
            data = None  # an AST: pytest's assertion rewriter parsed the file it just read
        if real.startswith(self.workdir):
            trusted = self.pristine_bytes(real, data)
            for key in {name, real}:
                if not trusted or key not in self.trusted_cache:
                    self.trusted_cache[key] = trusted
            if not trusted and real in self.pristine_at_start:
                return f"compile of {real[len(self.workdir) :][:120]}: changed during the run"
            return None
        if data is not None and any(real.startswith(r) for r in self.roots):
            on_disk = _read_bytes(real)
            if on_disk is None or on_disk.replace(b"\r\n", b"\n") != data.replace(b"\r\n", b"\n"):
                return f"compile of other text under the trusted file name {real[:120]}"
        return None

    def group(self, code: types.CodeType) -> tuple[str | None, bool]:
        """``(group, is_sanitizer)`` of a code object: the sanitizer pattern its file
        matches (``None``: none) and whether its function is one of that pattern's
        sanitizers."""
        key = (code.co_filename, code.co_name)
        cached = self.sanitizer_cache.get(key)
        if cached is not None:
            return cached
        filename = code.co_filename
        found: tuple[str | None, bool] = (None, False)
        # A leaky part of a package (pytest's frame wrappers) belongs to the package's
        # group, so the package's own sanitizers consume what it yields, but is never a
        # sanitizer itself.
        leaky_part = any(part in filename for part in _LEAKY_PARTS)
        for pattern, entries in _SANITIZERS:
            if pattern.startswith("<"):
                hit = filename == pattern
            elif pattern.endswith("/"):
                hit = pattern in filename
            else:
                hit = filename.endswith(pattern)
            if hit:
                group = (
                    "<frozen importlib." if pattern.startswith("<frozen importlib.") else pattern
                )
                sanitizer = not leaky_part and (entries is None or code.co_name in entries)
                found = (group, sanitizer)
                break
        self.sanitizer_cache[key] = found
        return found

    # ------------------------------------------------------------ stack walks
    def untrusted_on_stack(self, frame: types.FrameType | None) -> bool:
        base = self.base
        while frame is not None and frame is not base:
            if not self.trusted(frame.f_code.co_filename):
                return True
            frame = frame.f_back
        return False

    def leaky(self, code: types.CodeType) -> bool:
        """Whether this frame's function may hand what the event produced (a frame) to
        its caller: the standard library's frame-yielding functions, pytest's frame
        wrappers, and any function outside the audited roots (a dependency or the
        project: nobody reviewed what it returns)."""
        key = (code.co_filename, code.co_name)
        cached = self.leaky_cache.get(key)
        if cached is not None:
            return cached
        filename = code.co_filename
        if filename.startswith("<frozen "):
            found = False
        elif any(part in filename for part in _LEAKY_PARTS) or any(
            filename.endswith(suffix) and code.co_name in names for suffix, names in _LEAKY
        ):
            found = True
        else:
            real = _realpath(filename)
            found = not any(real.startswith(root) for root in self.audited)
        self.leaky_cache[key] = found
        return found

    def untrusted_origin(self, frame: types.FrameType | None) -> bool:
        """Whether an origin event (a frame handed out, text compiled) acts for untrusted
        code. Walking up from the event: an untrusted frame refuses; a sanitizer allows,
        unless a frame below it may leak what the event produced and lies outside the
        sanitizer's own file or package (a frame-yielding generator of another module,
        e.g. ``traceback.walk_stack``, drained by a sanitizer through C iterators that
        the caller chose: ``namedtuple("X", map(keep.append, walk_stack(None)))``);
        the bottom of the stack with nothing untrusted allows."""
        base = self.base
        leak_group: str | None = None
        leaked = False
        below: types.CodeType | None = None
        while frame is not None and frame is not base:
            code = frame.f_code
            if not self.trusted(code.co_filename):
                return True
            if (
                below is not None
                and below.co_name == "<module>"
                and code.co_name == "_call_with_frames_removed"
                and code.co_filename == "<frozen importlib._bootstrap>"
            ):
                # The body of a trusted module being imported (a pristine module or a
                # dependency, whoever imports it): what it introspects stays in its own
                # namespace, and the importer receives only the module.
                return False
            group, is_sanitizer = self.group(code)
            if is_sanitizer and (not leaked or (group is not None and group == leak_group)):
                return False
            if not leaked and self.leaky(code):
                leaked, leak_group = True, group
            below = code
            frame = frame.f_back
        return False

    # ------------------------------------------------------------ allowances
    def fresh_process(self, frame: types.FrameType | None) -> bool:
        """Whether a ``subprocess.Popen`` event starts a process that inherits nothing of
        this one: raised by the standard library's own ``Popen._execute_child`` (its
        locals are what the spawn below it uses), with ``close_fds``, no ``pass_fds``, no
        ``preexec_fn`` (Python run in the forked child), and the child's stdin, stdout
        and stderr none of the descriptors this worker inherited except its own 0-2
        (``/dev/null`` and the output pipes; never the report channel, however it was
        duplicated). Such a process runs under the same seccomp filter, Landlock domain
        and namespaces, cannot read this process's memory, holds no report key and dies
        with the job: it can decide nothing (design note 004, D7)."""
        if frame is None:
            return False
        code = frame.f_code
        if code.co_name != "_execute_child" or _realpath(code.co_filename) != _SUBPROCESS_FILE:
            return False
        names = frame.f_locals
        if names.get("close_fds") is not True or names.get("pass_fds"):
            return False
        if names.get("preexec_fn") is not None:
            return False
        kept = {ident for fd, ident in self.inherited_fds.items() if fd > 2}
        for name in ("p2cread", "c2pwrite", "errwrite"):
            fd = names.get(name)
            if type(fd) is not int:
                return False
            if fd > 2 and _fd_identity(fd) in kept:
                return False
        return True

    def own_defaults(self, target: Any, name: str, frame: types.FrameType | None) -> bool:
        """Whether a write of ``__defaults__``/``__kwdefaults__`` may pass though
        untrusted code asked for it (design note 004, D8): the function is changed code
        itself (its frames are untrusted whatever its defaults), or the write is made by
        the project or dependency function that defined it, on its own nested function
        (pyparsing's ``replaced_by_pep8`` sets its wrapper's ``__kwdefaults__`` from
        the function it wraps). Never ``__code__``, and never a function of the
        standard library, the harness's packages or this sandbox (audited code)."""
        if name not in _DEFAULTS_ATTRS or type(target) is not _FunctionType:
            return False
        target_code = target.__code__
        if not self.trusted(target_code.co_filename):
            return True
        if frame is None:
            return False
        writer = frame.f_code
        return (
            writer.co_filename == target_code.co_filename
            and self.trusted(writer.co_filename)
            and not self.audited_file(writer.co_filename)
            and any(const is target_code for const in writer.co_consts)
        )

    def untrusted_made(self, event: str, args: tuple[Any, ...]) -> bool:
        """Whether a ``compile`` or ``exec`` event makes or runs only untrusted code: text
        compiled under a name the policy does not trust (``<string>``, a changed or new
        workdir file, a path outside the trusted roots; never ``<frozen ...>`` or a
        trusted file's name, even with that file's own bytes), or a code object whose
        every nested code object has such a name (never a trusted function's
        ``__code__``, which would run trusted frames over the caller's globals)."""
        if event == "compile":
            filename = (tuple(args) + (None, None))[1]
            if not isinstance(filename, str | bytes) or not filename:
                return False
            return not self.trusted(_fsdecode(filename))
        code = args[0] if args else None
        if type(code) is not types.CodeType:
            return False
        pending = [code]
        while pending:
            current = pending.pop()
            if self.trusted(current.co_filename):
                return False
            pending.extend(c for c in current.co_consts if type(c) is types.CodeType)
        return True

    def audited_file(self, filename: str) -> bool:
        """Whether ``filename`` is audited code (standard library, harness, sandbox)."""
        if filename.startswith("<frozen "):
            return True
        real = _realpath(filename)
        return any(real.startswith(root) for root in self.audited)

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
            if refused:
                # Where: the calling functions (file name and function), so that a refusal
                # of a project's own code can be read and reported.
                frame: types.FrameType | None = _getframe(1)
                where: list[str] = []
                while frame is not None and frame is not self.base and len(where) < 6:
                    code = frame.f_code
                    if code.co_filename != _SELF_FILE:
                        name = code.co_filename.rsplit("/", 1)[-1]
                        mark = "" if self.trusted(code.co_filename) else "*"
                        where.append(f"{mark}{name}:{code.co_name}")
                    frame = frame.f_back
                refused = f"{refused} in {' < '.join(where)}"
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
        if event in _SPAWN:
            # A process started by trusted code (a project's multiprocessing pool, its CLI
            # run through ``sys.executable``): a fork keeps this policy; a fresh
            # interpreter holds neither the report channel nor this process's memory.
            if not self.untrusted_on_stack(frame):
                return None
            # For changed code, only a fresh process that inherits nothing: croniter's
            # ``platform.architecture()`` runs ``file``, click's pager and editor.
            return None if event == "subprocess.Popen" and self.fresh_process(frame) else event
        if event == "compile":
            spoof = self.compiled(args)
            if spoof is not None:
                return spoof
        if event in ("compile", "exec") and self.untrusted_made(event, args):
            # Changed code may turn text into code that is as untrusted as itself (six's
            # ``exec_`` at import, an ``eval`` of an expression): design note 004, D12.
            return None
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
            if (
                _trusted_object(target, name)
                and self.untrusted_origin(frame)
                and not self.own_defaults(target, name, frame)
            ):
                return f"{event} {_describe(target)}.{name}"
            return None
        if event != "open":  # os.symlink, os.link: a link could disguise a path
            return event if self.untrusted_on_stack(frame) else None
        path = args[0] if args else None
        if isinstance(path, int):
            if (
                self.inherited_fds.get(path) is not None
                and self.inherited_fds[path] == _fd_identity(path)
                and self.untrusted_on_stack(frame)
            ):
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


def _fd_identity(fd: int) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of an open descriptor, None when it is not open."""
    try:
        st = _fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


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
_sha256 = __import__("hashlib").sha256
_fstat = os.fstat
_os_open, _os_read, _os_close, _O_RDONLY = os.open, os.read, os.close, os.O_RDONLY


def _read_bytes(path: str) -> bytes | None:
    """A file's bytes, read by the hook itself (``os.open`` raises an ``open`` event,
    which the hook ignores while it is busy on this thread)."""
    try:
        fd = _os_open(path, _O_RDONLY)
    except OSError:
        return None
    chunks = []
    try:
        while True:
            chunk = _os_read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        _os_close(fd)
    return b"".join(chunks)


_FunctionType = types.FunctionType
_installed = False
_SELF_FILE = __file__


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


def install(
    workdir: str,
    base: types.FrameType,
    extra_roots: Iterable[str] = (),
    pristine: dict[str, str] | None = None,
    at_start: Iterable[str] | None = None,
) -> Any:
    """Install the policy for this process (once; it cannot be removed). ``base``: the
    frame below which every caller is the trusted harness entry (walks stop there);
    ``extra_roots``: more trusted directories (the project's installed dependencies);
    ``pristine``: the workdir's pristine files by sha256 (see ``PytestJob.pristine``);
    ``at_start``: those of them whose bytes are pristine now (None: hash them here).
    Returns the policy's ``trusted(filename)`` (None when it was already installed)."""
    global _installed
    if _installed:
        return None
    _installed = True
    # The hook is referenced by the interpreter alone: nothing Python can reach holds
    # the policy object (its caches decide what is trusted).
    policy_class = _private_copy()
    installed = policy_class(workdir, base, trusted_roots(extra_roots), pristine, at_start)
    sys.addaudithook(installed.hook)
    # The provenance question the harness asks of collected tests (``trusted(filename)``);
    # returns the hook's own answer, cached, and can only make a file less trusted.
    return installed.trusted
