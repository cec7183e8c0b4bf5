"""The task factory's trusted pytest plugin (runs in the project's own interpreter).

This file is standalone on purpose: the build copies it next to nothing else and loads it
with ``-p forge_factory_harness`` in the project's environment, where forgegym is not
installed. It is trusted code (ours), and the only code that observes the project's
tests: coverage is collected here, never by code a policy wrote.

Two modes, chosen by ``FORGE_FACTORY_MODE``; the request/answer files are
``FORGE_FACTORY_IN`` / ``FORGE_FACTORY_OUT`` (JSON):

``baseline``
    Run the suite; for every test record whether it passed (setup, call and teardown)
    and, when ``FORGE_FACTORY_TRACE=1``, the top-level functions of the project's source
    files it executed (a ``sys.settrace`` *call* hook that never traces lines, so the
    cost is one Python call per function call).
``screen``
    For each mutant of the request (a function's mutated definition), swap the live
    function's code, defaults and keyword defaults for the mutant's, run the tests that
    cover it, record which fail (with the failure's text; with ``first_failure`` only the
    first) and restore the function. One process screens every mutant of a project: no re-import, no re-collect.
``record``
    Run the requested tests of the pristine project and record the calls they make into
    one function (``{"file", "function", "limit", "packages"}``): its receiver and
    arguments at entry, encoded by the probe module (``forge_probe``, copied beside this
    plugin; calls with a value it cannot encode are skipped), and how it is reached
    (``function``, ``method``, ``classmethod``, ``staticmethod``, ``getter``, ``setter``).
    The answer is ``{"module", "kind", "calls": [{"test", "receiver", "args", "kwargs"}],
    "seen", "skipped"}``.
    A test that runs past ``FORGE_FACTORY_TEST_TIMEOUT`` seconds (``SIGALRM``) marks the
    mutant as timed out; one stuck where no signal handler runs ends the process
    (faulthandler's watchdog), and the build resumes after it. The answer is JSON lines.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

_MODE = os.environ.get("FORGE_FACTORY_MODE", "")
_ROOT = os.path.realpath(os.environ.get("FORGE_FACTORY_SOURCE_ROOT", os.getcwd()))
_EXCLUDE = ("/tests/", "/test/", "/testing/")


class _Timeout(BaseException):
    """Raised by the alarm inside a test that runs too long (BaseException: a test's
    ``except Exception`` cannot swallow it)."""


def _source_file(filename: str) -> str | None:
    """The project-relative path of a source (non-test) file, else None."""
    real = os.path.realpath(filename)
    if not real.startswith(_ROOT + os.sep) or not real.endswith(".py"):
        return None
    rel = real[len(_ROOT) + 1 :]
    name = os.path.basename(rel)
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return None
    if any(part in "/" + rel for part in _EXCLUDE):
        return None
    return rel


class _Tracer:
    def __init__(self) -> None:
        self.current: set[tuple[str, str]] = set()
        self._files: dict[str, str | None] = {}

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return None
        code = frame.f_code
        filename = code.co_filename
        rel = self._files.get(filename, "")
        if rel == "":
            rel = self._files[filename] = _source_file(filename)
        if rel is not None:
            # the mutable unit this code belongs to: f, f.<locals>.g -> f; C.m,
            # C.m.<locals>.g -> C.m (a class body's own code -> C)
            parts = code.co_qualname.split(".<locals>", 1)[0].split(".")
            self.current.add((rel, ".".join(parts[:2])))
        return None


def _passed(reports: list[Any]) -> bool:
    """Passed: the call passed and no phase (setup, call, teardown) failed."""
    return any(r.when == "call" and r.passed for r in reports) and not any(
        r.failed for r in reports
    )


def _failure_text(reports: list[Any], limit: int = 1500) -> str:
    for report in reports:
        if report.failed:
            text = str(report.longreprtext or "")
            return text[-limit:]
    return ""


class _Baseline:
    def __init__(self, trace: bool) -> None:
        self.trace = _Tracer() if trace else None
        self.tests: dict[str, dict[str, Any]] = {}
        self._reports: dict[str, list[Any]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        if self.trace is not None:
            self.trace.current = set()
            sys.settrace(self.trace)
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.trace is not None:
                sys.settrace(None)
        reports = self._reports.pop(item.nodeid, [])
        record: dict[str, Any] = {
            "passed": _passed(reports),
            "seconds": round(time.perf_counter() - start, 4),
        }
        if self.trace is not None:
            record["functions"] = sorted(f"{p}::{f}" for p, f in self.trace.current)
        self.tests[item.nodeid] = record

    def pytest_runtest_logreport(self, report: Any) -> None:
        self._reports.setdefault(report.nodeid, []).append(report)

    def pytest_sessionfinish(self, session: Any) -> None:
        Path(os.environ["FORGE_FACTORY_OUT"]).write_text(json.dumps({"tests": self.tests}))


def _module_for(path: str) -> Any:
    target = os.path.realpath(os.path.join(_ROOT, path))
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file and os.path.realpath(file) == target:
            return module
    return None


class _Screen:
    def __init__(self) -> None:
        self.request = json.loads(Path(os.environ["FORGE_FACTORY_IN"]).read_text())
        self.timeout = float(os.environ.get("FORGE_FACTORY_TEST_TIMEOUT", "5"))
        self.wanted = {t for m in self.request["mutants"] for t in m["tests"]}
        # the sandbox's confirmation finds every failing test; the screen needs one
        self.first_failure = bool(self.request.get("first_failure", False))

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        items[:] = [item for item in items if item.nodeid in self.wanted]

    def _run(self, item: Any) -> tuple[bool, str, bool]:
        from _pytest.runner import runtestprotocol

        def _alarm(signum: int, frame: Any) -> None:
            raise _Timeout(f"test ran past {self.timeout}s")

        import faulthandler

        previous = signal.signal(signal.SIGALRM, _alarm)
        # re-armed every 0.5 s: a bare ``except:`` in the code under test cannot swallow
        # the only alarm; a test stuck in C code (no handler runs) ends the process
        signal.setitimer(signal.ITIMER_REAL, self.timeout, 0.5)
        faulthandler.dump_traceback_later(3 * self.timeout + 5, exit=True, file=sys.stderr)
        try:
            reports = runtestprotocol(item, nextitem=None, log=False)
        except _Timeout:
            return False, "timeout", True
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            faulthandler.cancel_dump_traceback_later()
            signal.signal(signal.SIGALRM, previous)
        text = _failure_text(reports)
        return _passed(reports), text, "_Timeout" in text

    def pytest_runtestloop(self, session: Any) -> bool:
        import resource

        # A mutant may loop inside C code (``sum(itertools.count())``), where no Python
        # signal handler runs, or allocate without bound: faulthandler's watchdog thread
        # needs no GIL and ends the process, and the address space is capped. Results are
        # written one line per mutant as they come, so the build keeps every finished one,
        # counts the unfinished one as timed out and screens the rest in a new process.
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = 4 << 30
        if soft == resource.RLIM_INFINITY or soft > cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        items = {item.nodeid: item for item in session.items}
        with open(os.environ["FORGE_FACTORY_OUT"], "w", encoding="utf-8") as sink:
            for mutant in self.request["mutants"]:
                sink.write(json.dumps({"started": mutant["id"]}) + "\n")
                sink.flush()
                result = self._screen(mutant, items)
                sink.write(json.dumps(result) + "\n")
                sink.flush()
        # A mutant may leave a non-daemon thread blocked for ever (more-itertools: ten of
        # them), which the interpreter's shutdown would join without end: every answer is
        # written, so the process ends here.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def _screen(self, mutant: dict[str, Any], items: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": mutant["id"], "failing": {}, "status": "ok"}
        module = _module_for(mutant["file"])
        owner_name, _, method = mutant["function"].rpartition(".")
        name = method or owner_name
        owner: Any = module
        if owner_name and module is not None:
            owner = getattr(module, owner_name, None)
        raw = getattr(owner, "__dict__", {}).get(name) if owner is not None else None
        # staticmethod/classmethod wrap the function whose code is swapped
        func: Any = getattr(raw, "__func__", raw)
        code = getattr(func, "__code__", None)
        if code is None or code.co_name != name or code.co_freevars:
            out["status"] = "unpatchable"
            return out
        namespace = dict(module.__dict__)
        try:
            # at the function's own line: tracebacks (the bug report) show the real lines;
            # a method is compiled in a class of its class's name (private names mangle
            # the same way)
            if owner_name:
                body = "".join(
                    "    " + line if line.strip() else line
                    for line in mutant["source"].splitlines(keepends=True)
                )
                text = "\n" * max(0, code.co_firstlineno - 2) + f"class {owner_name}:\n" + body
            else:
                text = "\n" * (code.co_firstlineno - 1) + mutant["source"]
            exec(compile(text, module.__file__, "exec"), namespace)
        except Exception as exc:  # noqa: BLE001 - a mutant that does not compile is dropped
            out["status"] = f"compile: {type(exc).__name__}"
            return out
        new: Any = namespace.get(owner_name or name)
        if owner_name:
            new = getattr(new, "__dict__", {}).get(name)
            new = getattr(new, "__func__", new)
        saved = (func.__code__, func.__defaults__, func.__kwdefaults__)
        start = time.perf_counter()
        try:
            func.__code__ = new.__code__
            func.__defaults__ = new.__defaults__
            func.__kwdefaults__ = new.__kwdefaults__
            for test_id in mutant["tests"]:
                item = items.get(test_id)
                if item is None:
                    continue
                passed, text, timed_out = self._run(item)
                if timed_out:
                    out["status"] = "timeout"
                    break
                if not passed:
                    out["failing"][test_id] = text
                    if self.first_failure:
                        break
        finally:
            func.__code__, func.__defaults__, func.__kwdefaults__ = saved
        out["seconds"] = round(time.perf_counter() - start, 4)
        return out


_MISSING = object()


class _Record:
    def __init__(self) -> None:
        import forge_probe  # type: ignore[import-not-found]  # copied beside this plugin

        self.probe = forge_probe
        self.request = json.loads(Path(os.environ["FORGE_FACTORY_IN"]).read_text())
        self.target = os.path.realpath(os.path.join(_ROOT, self.request["file"]))
        self.function = self.request["function"]
        self.limit = int(self.request.get("limit", 60))
        self.per_test = int(self.request.get("per_test", 8))
        self.packages = frozenset(self.request.get("packages", ()))
        self.calls: list[dict[str, Any]] = []
        self.keys: set[str] = set()
        self.module: str | None = None
        self.kind: str | None = None
        self.seen = 0
        self.skipped = 0
        self.test = ""
        self.in_test = 0
        self._files: dict[str, bool] = {}
        self._frames: set[int] = set()
        self.why: dict[str, int] = {}

    def _kind(self, frame: Any) -> str | None:
        code = frame.f_code
        owner_name, _, name = self.function.rpartition(".")
        if not owner_name:
            return "function"
        owner = frame.f_globals.get(owner_name.split(".")[0])
        for part in owner_name.split(".")[1:]:
            owner = getattr(owner, part, None)
        raw = getattr(owner, "__dict__", {}).get(name)
        if raw is None and name.startswith("__") and not name.endswith("__"):
            raw = getattr(owner, "__dict__", {}).get(
                f"_{owner_name.rsplit('.', 1)[-1].lstrip('_')}{name}"
            )
        if isinstance(raw, staticmethod):
            return "staticmethod"
        if isinstance(raw, classmethod):
            return "classmethod"
        if isinstance(raw, property):
            if raw.fget is not None and getattr(raw.fget, "__code__", None) is code:
                return "getter"
            if raw.fset is not None and getattr(raw.fset, "__code__", None) is code:
                return "setter"
            return None
        if getattr(raw, "__code__", None) is code:
            return "method"
        return None

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return None
        code = frame.f_code
        if code.co_qualname != self.function:
            return None
        if code.co_flags & 0x2A0:  # a generator, coroutine or async generator
            if id(frame) in self._frames:  # resumed, not called
                return None
            self._frames.add(id(frame))
        hit = self._files.get(code.co_filename)
        if hit is None:
            hit = self._files[code.co_filename] = os.path.realpath(code.co_filename) == self.target
        if not hit:
            return None
        self.seen += 1
        if len(self.calls) >= self.limit or self.in_test >= self.per_test:
            return None
        try:
            self._record(frame, code)
        except Exception as exc:  # noqa: BLE001 - a call that cannot be encoded is skipped
            self.skipped += 1
            why = f"{type(exc).__name__}: {exc}"[:120]
            self.why[why] = self.why.get(why, 0) + 1
        return None

    def _record(self, frame: Any, code: Any) -> None:
        kind = self._kind(frame)
        if kind is None or (
            self.kind is not None
            and kind != self.kind
            and {kind, self.kind} != {"getter", "setter"}
        ):
            self.skipped += 1
            return
        names = code.co_varnames
        n = code.co_argcount
        values = frame.f_locals
        skip = 1 if kind in ("method", "getter", "setter", "classmethod") else 0
        receiver = None
        if kind in ("method", "getter", "setter"):
            receiver = self.probe.encode(values[names[0]], self.packages)
        index = n + code.co_kwonlyargcount
        extra = list(values[names[index]]) if code.co_flags & 0x04 else []  # *args
        index += 1 if code.co_flags & 0x04 else 0
        defaulted = self._defaulted(frame, code) if kind not in ("getter", "setter") else set()
        # A parameter holding its very default object is left out, the ones after it
        # passed by name: the call then runs the candidate's own defaults (a changed
        # default shows), as the test's call did when it left the argument out.
        positional: list[Any] = []
        kwargs: list[list[Any]] = []
        omitting = False
        for i, name in enumerate(names[skip:n], skip):
            if name in defaulted and not extra:
                omitting = True
            elif omitting and i >= code.co_posonlyargcount:
                kwargs.append([name, values[name]])
            elif omitting:  # a positional-only parameter after a left-out one
                return self._record_all(frame, code, kind)
            else:
                positional.append(values[name])
        positional += extra
        kwonly = names[n : n + code.co_kwonlyargcount]
        kwargs += [[name, values[name]] for name in kwonly if name not in defaulted]
        if code.co_flags & 0x08:  # **kwargs
            kwargs += [[k, v] for k, v in values[names[index]].items()]
        self._store(frame, kind, receiver, positional, kwargs)

    def _record_all(self, frame: Any, code: Any, kind: str) -> None:
        """Every parameter passed as it was bound (no default left out)."""
        names = code.co_varnames
        n = code.co_argcount
        values = frame.f_locals
        skip = 1 if kind in ("method", "getter", "setter", "classmethod") else 0
        receiver = None
        if kind in ("method", "getter", "setter"):
            receiver = self.probe.encode(values[names[0]], self.packages)
        positional = [values[name] for name in names[skip:n]]
        kwargs = [[name, values[name]] for name in names[n : n + code.co_kwonlyargcount]]
        index = n + code.co_kwonlyargcount
        if code.co_flags & 0x04:  # *args
            positional += list(values[names[index]])
            index += 1
        if code.co_flags & 0x08:  # **kwargs
            kwargs += [[k, v] for k, v in values[names[index]].items()]
        self._store(frame, kind, receiver, positional, kwargs)

    def _defaulted(self, frame: Any, code: Any) -> set[str]:
        """The parameters whose value is the very object of their default."""
        function = self._function(frame, code)
        if function is None:
            return set()
        values = frame.f_locals
        names = code.co_varnames[: code.co_argcount]
        defaults = function.__defaults__ or ()
        out = {
            name
            for name, default in zip(names[len(names) - len(defaults) :], defaults, strict=True)
            if values.get(name, _MISSING) is default
        }
        for name, default in (function.__kwdefaults__ or {}).items():
            if values.get(name, _MISSING) is default:
                out.add(name)
        return out

    def _function(self, frame: Any, code: Any) -> Any:
        """The function object running ``code`` (through decorators that wrap it)."""
        owner_name, _, name = self.function.rpartition(".")
        owner: Any = None
        if not owner_name:
            raw = frame.f_globals.get(name)
        else:
            owner = frame.f_globals.get(owner_name.split(".")[0])
            for part in owner_name.split(".")[1:]:
                owner = getattr(owner, part, None)
            found = getattr(owner, "__dict__", {})
            raw = found.get(name)
            if raw is None and name.startswith("__") and not name.endswith("__"):
                raw = found.get(f"_{owner_name.rsplit('.', 1)[-1].lstrip('_')}{name}")
        raw = getattr(raw, "__func__", raw)  # static and class methods
        for _ in range(8):
            if raw is None or getattr(raw, "__code__", None) is code:
                return raw
            raw = getattr(raw, "__wrapped__", None)
        return None

    def _store(
        self, frame: Any, kind: str, receiver: Any, positional: list[Any], kwargs: list[Any]
    ) -> None:
        record = {
            "kind": kind,
            "receiver": receiver,
            "args": self.probe.encode(positional, self.packages),
            "kwargs": self.probe.encode(kwargs, self.packages),
        }
        key = json.dumps(record, sort_keys=True)
        if key in self.keys:
            return
        if len(key) > 20_000:
            self.skipped += 1
            return
        self.keys.add(key)
        self.module = frame.f_globals.get("__name__")
        self.kind = self.kind or kind
        self.calls.append({"test": self.test, **record})
        self.in_test += 1

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self.test, self.in_test = item.nodeid, 0
        sys.settrace(self)
        try:
            yield
        finally:
            sys.settrace(None)

    def pytest_sessionfinish(self, session: Any) -> None:
        answer = {
            "module": self.module,
            "kind": self.kind,
            "calls": self.calls,
            "seen": self.seen,
            "skipped": self.skipped,
            "why": dict(sorted(self.why.items(), key=lambda kv: -kv[1])[:3]),
        }
        Path(os.environ["FORGE_FACTORY_OUT"]).write_text(json.dumps(answer))


def pytest_configure(config: Any) -> None:
    if _MODE == "baseline":
        config.pluginmanager.register(
            _Baseline(os.environ.get("FORGE_FACTORY_TRACE") == "1"), "forge-factory-baseline"
        )
    elif _MODE == "screen":
        config.pluginmanager.register(_Screen(), "forge-factory-screen")
    elif _MODE == "record":
        config.pluginmanager.register(_Record(), "forge-factory-record")
