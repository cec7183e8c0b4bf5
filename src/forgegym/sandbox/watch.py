"""What a test does, observed by the trusted harness (child side): the per-test watch.

A verdict from pytest says whether a test raised; it does not say whether the test
*tested* anything. :class:`WatchPlugin` (enabled by ``PytestJob.watch``) adds, per test
call, what the trusted parent needs to tell a test from a disguised one:

* ``entries``: how many times the test function's code was entered during its call
  (a retry by recursion, a retrying decorator or a re-invocation through any alias
  enters it again);
* ``lines``: the distinct lines of the test's file that ran during the call (the
  parent maps them onto the file's ``assert`` statements: a pass that skipped the
  assertions is a skip, not a pass);
* ``handled``: exceptions that reached a frame of the test file and that frame went on
  running (``(type, line it surfaced on, line execution resumed at)``; the parent
  decides which were swallowed by an ``except`` of the test);
* ``tamper``: the first *chaos seam* found changed: the process RNG's bindings and
  instance, the clock and time-zone functions of :mod:`time`, the ``TZ``/``LANG``/
  ``LC_*`` variables, the thread switch interval, the seam modules in ``sys.modules``,
  a workspace module's ``random``/``time``/``datetime``/``os``/``locale`` global, or the
  process locale. The seams are snapshotted when the plugin is created (the chaos hook
  has run, no workspace module exists yet), checked and re-armed before every test
  call (so a test module that disarms the chaos at import, by any name, is both caught
  and undone), checked whenever workspace code outside the test file is entered during
  the call, and checked after it. A tamper is sticky for the rest of the run.

With :func:`private_random` the process RNG's draws come from a private generator the
test cannot reach: ``random.seed``/``setstate`` (by any name, through the class or the
instance) reseed a decoy state nothing draws from, and there is no way to peek at or
rewind the stream; the sequence of draws is the one ``random.seed(seed)`` would give.

Integrity: the counters live in the suspended frame of a generator (``gi_frame`` is
refused by the runtime policy, :mod:`.policy`); the tracer that feeds it accepts real
frames only (which code under test cannot obtain), and reading or arming it checks its
caller's frame chain (an untrusted caller gets the worker ended by the policy). Only this
module may install the trace function (``sys.settrace`` is otherwise refused).

Residual risk, written down: a retry run in a thread the test starts is not counted
(threads are not traced), and a test could in principle find the plugin object
through the ``request`` fixture; it cannot read or change its state.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from collections.abc import Callable, Generator
from typing import Any

import pluggy

__all__ = ["WatchPlugin", "private_random"]

#: Environment variables the chaos schedule sets (the rest of the environment is free).
TRACKED_ENV = (
    "TZ",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_MONETARY",
    "LC_COLLATE",
    "LC_MESSAGES",
)
#: Modules whose bindings are chaos seams (and whose names workspace globals may hold).
SEAM_MODULES = ("random", "time", "datetime", "os", "locale")
_TIME_VALUES = ("tzname", "timezone", "altzone", "daylight")
_MAX_HANDLED = 50


def private_random(seed: int) -> None:
    """Make every draw of the process RNG (``random.random``, ``choice``, ``randint``,
    ...) come from a private ``random.Random(seed)`` held in a generator frame: the same
    sequence ``random.seed(seed)`` gives, from state the code under test cannot reach.
    Called by a trusted setup hook before any workspace code exists."""
    import random

    stream = _stream(random.Random(seed))
    next(stream)
    send = stream.send
    int_type = int

    class ChaosRandom(random.Random):
        """The process RNG: draws come from the private stream; ``seed``, ``getstate``
        and ``setstate`` act on this instance's own state, which nothing draws from."""

        def random(self) -> float:
            return float(send(None))

        def getrandbits(self, k: int) -> int:
            if type(k) is not int_type or k < 0:
                raise ValueError("number of bits must be a non-negative int")
            return int(send(k))

    old = random._inst  # type: ignore[attr-defined]
    inst = ChaosRandom()
    for name, value in list(vars(random).items()):
        if getattr(value, "__self__", None) is old:
            setattr(random, name, getattr(inst, name))
    random._inst = inst  # type: ignore[attr-defined]


def _stream(rng: Any) -> Generator[Any, Any, None]:
    request = yield None
    while True:
        request = yield (rng.random() if request is None else rng.getrandbits(request))


# ------------------------------------------------------------------------ seams


class _Seams:
    """The chaos seams as they were armed (plain data; lives only in the core's frame)."""

    def __init__(self, workdir: str, skip_files: frozenset[str]) -> None:
        import locale

        self.workdir = workdir.rstrip(os.sep) + os.sep
        self.skip_files = skip_files
        self.modules = {name: sys.modules.get(name) or __import__(name) for name in SEAM_MODULES}
        self.bindings: list[tuple[str, dict[str, Any], str, Any]] = []
        for name in ("random", "time", "datetime"):
            namespace = vars(self.modules[name])
            for key, value in list(namespace.items()):
                if not key.startswith("__") and not (name == "time" and key in _TIME_VALUES):
                    self.bindings.append((name, namespace, key, value))
        self.real = {id(m) for m in self.modules.values()}
        self.real |= {id(v) for _, _, _, v in self.bindings}
        time_module = self.modules["time"]
        self.time_values = {k: getattr(time_module, k, None) for k in _TIME_VALUES}
        self.env = {k: os.environ.get(k) for k in TRACKED_ENV}
        self.switch = sys.getswitchinterval()
        self.locale = locale.setlocale(locale.LC_ALL)

    def quick(self, frame_globals: dict[str, Any] | None = None) -> str | None:
        """What changed, checked cheaply (every entry into workspace code)."""
        for name, namespace, key, value in self.bindings:
            if namespace.get(key) is not value:
                return f"{name}.{key} was rebound"
        modules = sys.modules
        for name, module in self.modules.items():
            if modules.get(name) is not module:
                return f"sys.modules[{name!r}] was replaced"
        environ = os.environ
        for key, value in self.env.items():
            if environ.get(key) != value:
                return f"environment variable {key} was changed"
        time_module = self.modules["time"]
        for key, value in self.time_values.items():
            if getattr(time_module, key, None) != value:
                return f"time.{key} changed (time zone reset)"
        # Stored in whole microseconds: a set/get round trip may move it by one.
        if abs(sys.getswitchinterval() - self.switch) > 2e-6:
            return "the thread switch interval was changed"
        if frame_globals is not None:
            return self._module_globals(frame_globals, "code under test")
        return None

    def _module_globals(self, namespace: dict[str, Any], where: str) -> str | None:
        real = self.real
        for name in SEAM_MODULES:
            if name in namespace and id(namespace[name]) not in real:
                return f"{where}: global {name!r} is not the real one"
        return None

    def full(self) -> str | None:
        """Everything (before and after each call)."""
        import locale

        what = self.quick()
        if what is not None:
            return what
        if locale.setlocale(locale.LC_ALL) != self.locale:
            return "the process locale was changed"
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if not isinstance(path, str) or not path.startswith(self.workdir):
                continue
            if path in self.skip_files:
                continue
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict):
                what = self._module_globals(namespace, path[len(self.workdir) :])
                if what is not None:
                    return what
        return None

    def rearm(self) -> None:
        """Put every seam back as armed."""
        import locale

        for _, namespace, key, value in self.bindings:
            if namespace.get(key) is not value:
                namespace[key] = value
        for name, module in self.modules.items():
            sys.modules[name] = module
        for key, value in self.env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        time_module = self.modules["time"]
        if hasattr(time_module, "tzset"):
            time_module.tzset()
        if abs(sys.getswitchinterval() - self.switch) > 2e-6:
            sys.setswitchinterval(self.switch)
        if locale.setlocale(locale.LC_ALL) != self.locale:
            with contextlib.suppress(locale.Error):
                locale.setlocale(locale.LC_ALL, self.locale)


# ------------------------------------------------------------------------ the core


def _core(
    seams: _Seams, allowed: tuple[types.CodeType, ...], getframe: Callable[[int], Any]
) -> Generator[Any, Any, None]:
    """The watch's state, in a suspended frame. Messages: a ``(frame, event, arg)``
    trace event (from the tracer; answered with the local trace function or ``None``),
    or a command ``(name, ...)`` from one of ``allowed`` (the plugin's methods)."""
    frame_type = types.FrameType
    tracer: Any = None
    tamper: str | None = None
    active = False
    test_file = ""
    name = ""
    entries = 0
    target_frames: list[Any] = []
    lines: set[int] = set()
    handled: list[list[Any]] = []
    pending: dict[int, tuple[str, int]] = {}
    workdir = seams.workdir
    results: dict[str, list[dict[str, Any]]] = {}
    reply: Any = None
    while True:
        message = yield reply
        reply = None
        if type(message) is tuple and len(message) == 3 and type(message[0]) is frame_type:
            if not active:
                continue
            frame, event, arg = message
            code = frame.f_code
            filename = code.co_filename
            if event == "call":
                if filename == test_file:
                    if code.co_name == name and not any(f is frame for f in target_frames):
                        target_frames.append(frame)
                        entries += 1
                    reply = tracer
                elif filename.startswith(workdir) and tamper is None:
                    tamper = seams.quick(frame.f_globals)
                continue
            if filename != test_file:
                continue
            reply = tracer
            key = id(frame)
            if event == "line":
                lines.add(frame.f_lineno)
                surfaced = pending.pop(key, None)
                if surfaced is not None and len(handled) < _MAX_HANDLED:
                    handled.append([surfaced[0], surfaced[1], frame.f_lineno])
            elif event == "exception":
                exc_type = arg[0] if type(arg) is tuple and arg else None
                label = getattr(exc_type, "__name__", "?")
                if isinstance(exc_type, type) and issubclass(exc_type, AssertionError):
                    label = "AssertionError"
                pending[key] = (str(label)[:80], frame.f_lineno)
            elif event == "return":
                pending.pop(key, None)
            continue
        caller = getframe(1)
        if caller is None or not any(caller.f_code is c for c in allowed):
            continue
        command = message[0] if type(message) is tuple and message else None
        if command == "tracer":
            tracer = message[1]
        elif command == "begin":
            _, nodeid, test_file, name = message
            if tamper is None:
                tamper = seams.full()
            seams.rearm()
            active, entries, lines, handled, pending = True, 0, set(), [], {}
            target_frames = []
        elif command == "end":
            active = False
            if tamper is None:
                tamper = seams.full()
            results.setdefault(message[1], []).append(
                {
                    "entries": entries,
                    "lines": sorted(lines),
                    "handled": handled,
                    "tamper": tamper,
                }
            )
            target_frames = []
        elif command == "take":
            queue = results.get(message[1])
            reply = queue.pop(0) if queue else ({"tamper": tamper} if tamper else None)


class WatchPlugin:
    """The pytest plugin of the watch (registered by the harness for ``watch`` jobs).

    ``workdir``: the job's copy (workspace code is what lies under it)."""

    def __init__(self, workdir: str) -> None:
        workdir = os.path.realpath(workdir)
        allowed = (
            WatchPlugin.pytest_runtest_call.__code__,
            WatchPlugin.take.__code__,
            WatchPlugin.__init__.__code__,
        )
        core = _core(_Seams(workdir, frozenset()), allowed, sys._getframe)
        next(core)
        send = core.send
        frame_type = types.FrameType
        self._send = send

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            if type(frame) is not frame_type:
                return None
            return send((frame, event, arg))

        self._tracer = tracer
        send(("tracer", tracer))

    @pluggy.HookimplMarker("pytest")(wrapper=True)
    def pytest_runtest_call(self, item: Any) -> Generator[None, Any, Any]:
        """Watch the call of ``item`` (a hook wrapper: the trace function is installed
        around pytest's own call of the test, the seams re-armed before it)."""
        path = str(getattr(item, "path", "") or "")
        name = getattr(getattr(item, "function", None), "__name__", None) or item.name
        name = str(name).split("[", 1)[0]
        self._send(("begin", item.nodeid, os.path.realpath(path) if path else "", name))
        previous = sys.gettrace()
        sys.settrace(self._tracer)
        try:
            return (yield)
        finally:
            sys.settrace(previous)
            self._send(("end", item.nodeid))

    def take(self, nodeid: str) -> dict[str, Any] | None:
        """The watch record of the next finished call of ``nodeid`` (``None``: none)."""
        record = self._send(("take", nodeid))
        return record if isinstance(record, dict) else None
