"""What runs inside the sandbox child: the pytest reporting plugin and the call harness.

Also the process entry points: the fork-server zygote loop and the one-shot interpreter
of the subprocess baseline. Both start with ``python -I`` (or ``-s -P`` plus a scrubbed
environment when a hash seed must be fixed) from a neutral directory, so nothing in a
workspace (``sitecustomize.py``, ``usercustomize.py``, ``*.pth``, ``PYTHON*`` variables)
is ever consulted at interpreter start; the workdir is put on ``sys.path`` explicitly.

Wire protocol (child -> parent, one JSON object per line on the report fd): the first
line is ``{"t": "key", "k": <hex>}``, a fresh 256-bit key the worker draws before any
workspace code exists in the process; every later line is ``<json> <hex HMAC-SHA256 of
"<seq>:<json>">`` (:func:`read_report` verifies, in order). The lines are:

* pytest: ``{"t": "test", ...TestRecord fields}`` per executed test (repeats included),
  then ``{"t": "end", "collected": [...], "ran": n, "exitstatus": k, "collection_errors": [...]}``
* calls: ``{"t": "call", "index": i, "ok": ..., "value"|"error_type"/"message"}``, then
  ``{"t": "end", "n": count}``
* ``{"t": "internal", "message": ...}`` when the harness itself failed.

The parent trusts none of it blindly: it requires the sentinel, a clean exit of the
worker, matching counts and (if given) the expected ids.

Forgery. Code under test runs in the process that reports on it, so the design is
defence in depth (decided and measured for issue 9):

1. *Runtime policy* (:mod:`.policy`): before the workdir is on ``sys.path`` the worker
   installs audit hooks that end it when code under test reaches for frames, the
   collector's object graph, ``ctypes``, ``exec``/``compile`` of text, ``/proc``,
   inherited fds or ``fork``, and a seccomp filter that refuses signal handlers (which
   would be handed frames).
2. *Authenticated channel*: the MAC key lives only inside OpenSSL, held by the
   :func:`_signer` generator, whose frame nothing can reach. Lines written to the fd by
   anyone else (brute-forced fds, a forged sentinel, ``os._exit`` tricks) fail the
   MAC; the signer signs only for the harness's own emitters called through pluggy, so
   replaying an emit from a finalizer or calling the reporter from a test is refused.
3. *Integrity snapshot*: when pytest starts collecting (no workspace module imported
   yet) the signer records the globals and class attributes of pytest, pluggy, json,
   builtins and this package, the registered plugins and the hook implementations of
   the run protocol; any later change (a test registering a report-rewriting plugin,
   ``TestReport.from_item_and_call`` or ``_pytest.runner.call_and_report`` replaced
   through ``importlib`` and computed names) turns every following line into a
   ``tamper`` record, and the run fails. Plugins and hooks are compared before every
   line, the ~9,000 globals before the sentinel and as often as ``FULL_CHECK_SHARE`` of
   the job's CPU allows (design note 004, D13): a patch that stays is always seen.

Residual risk, written down: the objects of a pytest session reachable through the
``request`` fixture (items, the session, the fixture manager) are ordinary mutable
instances, and a patch of a trusted global undone before the next comparison is not
seen (D13). FlakyRepair therefore also judges source faults with the pristine tests,
and hidden Bugfix checks stay differential (values compared in the parent, which
never sends expected values into the child).

An alternative, a verdict learnt outside the test process (tracing the test function's
frame from a second process), was rejected: it costs a ptrace stop per event, and
anything in-process would still be reachable from the code it observes.

Standard library only at import time (pytest is imported lazily / pre-imported by zygotes).
"""

from __future__ import annotations

import contextlib
import gc
import hmac
import importlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

from . import excepthooks, isolation, policy, pristine_mounts  # noqa: F401 - warm in zygotes
from .integrity import (
    FULL_CHECK_INTERVAL_S,
    _bind_lazy_pytest_globals,
    _bind_lazy_stdlib_globals,
    _early_snapshot,
    _integrity_check,
    next_full_check,
)
from .ledger import (
    _Collected,
    _CollectError,
    _End,
    _Error,
    _Finish,
    _Ledger,
    _Phase,
    _Provenance,
    _safe_str,
)
from .prebuilt_config import _prebuild_config, _prebuilt_config
from .protocol import StrictValueError, read_report, recv_frame, refused, send_frame, strict_plain
from .pytest_args import _pytest_args
from .reaping import _kill_run, _sweep
from .zygote import _preimport, _Shared, _zygote_exit, _zygote_setup

__all__ = ["StrictValueError", "main", "read_report", "refused", "strict_plain", "supervise"]

_hmac_new = hmac.new
_hmac_compare = hmac.compare_digest
_MAX_MSG = 1 << 20  # truncation for messages inside records
_TRUSTED_PREFIX = "forgegym."

# ============================================================================ reporting


class _Reporter:
    """Writes protocol lines to the report fd: the first one announces the run's key, every
    later one is authenticated (see :func:`_signer`)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._signer: Any = None

    def start(self) -> None:
        """Announce a fresh per-run key (before any workspace code exists in this
        process) and hand it to the signer; no Python object keeps the key itself."""
        key = os.urandom(32)
        line = (json.dumps({"t": "key", "k": key.hex()}) + "\n").encode()
        view = memoryview(line)
        while view:
            view = view[os.write(self._fd, view) :]
        import _hashlib

        mac = _hashlib.hmac_new(key, digestmod="sha256")  # OpenSSL holds the key
        del key, line, view
        self._signer = _signer(mac, self._fd, _signer_context())
        next(self._signer)

    def emit(self, obj: Any) -> bool:
        return bool(self._signer.send(obj))

    def arm(self, config: Any) -> None:
        """Snapshot the trusted state the verdicts depend on (see :func:`_signer`)."""
        self._signer.send(_Arm(config))


class _Arm:
    """Message to the signer: take the integrity snapshot now (pytest configured, no
    workspace module imported yet)."""

    __slots__ = ("config",)

    def __init__(self, config: Any) -> None:
        self.config = config


def _signer_context() -> dict[str, Any]:
    """What the signer compares frames and state against, bound when it starts."""
    import pluggy._manager

    multicall = pluggy._manager._multicall  # what PluginManager dispatches through
    return {
        "emit": _Reporter.emit.__code__,
        "arm": _Reporter.arm.__code__,
        "emitters": (
            ReportPlugin.pytest_runtest_logfinish.__code__,
            ReportPlugin.pytest_sessionfinish.__code__,
            ReportPlugin.pytest_collection_modifyitems.__code__,
            ReportPlugin.pytest_runtest_logreport.__code__,
            ReportPlugin.pytest_runtest_makereport.__code__,
            ReportPlugin.pytest_collectreport.__code__,
            _run_pytest.__code__,
            _run_calls.__code__,
            _worker.__code__,
        ),
        "hooks": (
            ReportPlugin.pytest_runtest_logfinish.__code__,
            ReportPlugin.pytest_collection.__code__,
            ReportPlugin.pytest_sessionfinish.__code__,
            ReportPlugin.pytest_collection_modifyitems.__code__,
            ReportPlugin.pytest_runtest_logreport.__code__,
            ReportPlugin.pytest_runtest_makereport.__code__,
            ReportPlugin.pytest_collectreport.__code__,
        ),
        "multicall": multicall.__code__,
        "globals": globals(),
        "multicall_globals": multicall.__globals__,
    }


def _signer(mac: Any, fd: int, ctx: dict[str, Any]) -> Any:
    """The only writer of authenticated lines: a generator, so the MAC object and the
    snapshot live in a suspended frame that code under test cannot reach (``gi_frame``,
    ``gc.get_referents`` and frame walks are refused by the runtime policy).

    It signs ``obj`` (yields True) only when it was sent by :meth:`_Reporter.emit` called
    from one of the harness's own emitters (hook emitters only from pluggy's dispatcher),
    all with the harness's real globals, so a partial or finalizer that replays an emit
    from trusted code is refused too. Once armed, every line first compares the trusted
    state with the snapshot (globals of pytest/pluggy/json/builtins/the sandbox package,
    the registered plugins, the hook implementations of the run protocol): any change
    (a plugin registered by a test, a patched pytest function) turns the line into a
    ``tamper`` record, which fails the run. Every name used here is a local bound at
    start: rebinding a module attribute or a builtin changes nothing inside.
    """
    import operator

    getframe = sys._getframe
    write = os.write
    encode = _json_encoder()
    join = "".join
    is_instance, len_, map_ = isinstance, len, map
    type_, memview = type, memoryview
    is_ = operator.is_
    arm_type = _Arm
    emit_code, arm_code = ctx["emit"], ctx["arm"]
    emitters, hooks = ctx["emitters"], ctx["hooks"]
    multicall_code, g, mg = ctx["multicall"], ctx["globals"], ctx["multicall_globals"]
    tampered: list[str] = []
    # The snapshot lives in the two closures' cells, held by this frame alone.
    take_snapshot, changed = _integrity_check(_early_snapshot(), tampered)
    clock, end_type, due_after = time.process_time, _End, next_full_check  # locals: no lookup
    next_full = clock() + FULL_CHECK_INTERVAL_S
    seq, ok = 0, False

    def contains(items: tuple[Any, ...], item: Any) -> bool:
        return True in map_(is_, items, (item,) * len_(items))

    def trusted_chain(frame: Any) -> bool:
        if frame is None or frame.f_globals is not g:
            return False
        code = frame.f_code
        up = frame.f_back
        if up is None or up.f_globals is not g:
            return False
        if code is arm_code:
            if up.f_code is not hooks[1]:
                return False
        elif code is not emit_code or not contains(emitters, up.f_code):
            return False
        if contains(hooks, up.f_code):
            dispatcher = up.f_back
            return (
                dispatcher is not None
                and dispatcher.f_code is multicall_code
                and dispatcher.f_globals is mg
            )
        return True

    ledger = _Ledger()
    ledger_messages: dict[type, Callable[[Any], None]] = {
        _Collected: ledger.collect,
        _Phase: ledger.phase,
        _Error: ledger.error,
        _CollectError: lambda m: ledger.collection_errors.append(m.text),
        _Provenance: ledger.provenance_from,
    }
    composed: dict[type, Callable[[Any], dict[str, Any]]] = {
        _Finish: ledger.finish,
        _End: ledger.end,
    }
    while True:
        obj = yield ok
        ok = False
        caller = getframe(1)
        if not trusted_chain(caller):
            continue
        if is_instance(obj, arm_type):
            take_snapshot(obj.config)  # once: a second arm changes nothing
            ok = True
            continue
        kind = type_(obj)
        if kind in ledger_messages:
            ledger_messages[kind](obj)
            ok = True
            continue
        if kind in composed:
            obj = composed[kind](obj)
        if not tampered:
            # the globals before the sentinel and when due (docstring, point 3)
            full = (began := clock()) >= next_full or kind is end_type
            what = changed(full)
            if full:
                next_full = due_after(began, clock())
            if what is not None:
                tampered.append(what)
        if tampered:
            obj = {"t": "tamper", "what": tampered[0]}
        data = join(encode(obj, 0)).encode()
        tag = mac.copy()
        tag.update(b"%d:" % seq)
        tag.update(data)
        line = data + b" " + tag.hexdigest().encode() + b"\n"
        view = memview(line)
        while view:
            view = view[write(fd, view) :]
        seq += 1
        ok = True


def _json_encoder() -> Any:
    """The C JSON encoder, bound once (``json.dumps`` consults rebindable globals)."""
    import _json

    def default(value: Any) -> Any:
        raise TypeError(f"not JSON: {type(value).__name__}")

    return _json.make_encoder(
        None, default, _json.encode_basestring_ascii, None, ":", ",", True, False, True
    )


def _frames(tb: Any, workdir: str) -> list[dict[str, Any]]:
    """Traceback frames inside the workdir, paths relative to it."""
    out: list[dict[str, Any]] = []
    prefix = workdir.rstrip(os.sep) + os.sep
    for fs in traceback.extract_tb(tb, limit=50):
        path = os.path.abspath(fs.filename)
        if path.startswith(prefix):
            out.append(
                {"path": path[len(prefix) :], "line": int(fs.lineno or 0), "function": fs.name}
            )
    return out[-20:]


def _no_tracing(self: Any) -> bool:
    return False


def _quiet_hypothesis_tracing() -> None:
    """Hypothesis traces a failing test's lines (``sys.settrace``; ``sys.monitoring``
    from 3.12) to explain the failure. The runtime policy refuses a trace function to
    all but the harness's watch (one is handed frames), so the worker would end at the
    first failing property, and every later test with it. Hypothesis supports replacing
    ``_should_trace`` (its own note): the test still fails, without the explanation."""
    core: Any = sys.modules.get("hypothesis.core")
    state = getattr(core, "StateForActualGivenExecution", None)
    if state is not None and getattr(state, "_should_trace", _no_tracing) is not _no_tracing:
        state._should_trace = _no_tracing


class ReportPlugin:
    """pytest plugin streaming one record per executed test, honouring ``order``. It holds
    no verdict state: each hook hands plain facts to the signer's ledger (see
    :class:`_Ledger`), which composes and signs the records."""

    def __init__(
        self,
        reporter: _Reporter,
        workdir: str,
        order: list[str] | None,
        policy: bool = True,
        watch: Any = None,
    ) -> None:
        self.reporter = reporter
        self.watch = watch
        self.policy = policy
        self.workdir = workdir
        self.order = order

    def pytest_collection(self, session: Any) -> None:
        # Called before pytest's own implementation collects: every plugin of the session
        # is registered and no workspace module has been imported yet.
        if self.policy:
            policy.deny_signal_handlers()
        _bind_lazy_pytest_globals()
        _bind_lazy_stdlib_globals()
        self.reporter.arm(session.config)

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        # The end-of-run sentinel, before pytest unconfigures (which undoes the patches
        # its own plugins made, and would read as tampering afterwards).
        self.reporter.emit(_End(int(exitstatus)))

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.reporter.emit(
                _CollectError(f"{report.nodeid}: {_safe_str(report.longrepr, 4000)}")
            )

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        collected = list(items)
        if self.order is not None:
            by_id = {item.nodeid: item for item in items}
            items[:] = [by_id[i] for i in self.order if i in by_id]
        self.reporter.emit(_Collected(collected, session, len(items)))

    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> bool:
        from _pytest.runner import runtestprotocol

        # A repeated id is the same Item object: tearing down "towards" itself would keep
        # it set up, so tear down to its parent instead (module fixtures stay alive).
        if nextitem is item:
            nextitem = item.parent
        if self.policy:
            _quiet_hypothesis_tracing()  # imported by the test modules, or by a fixture
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        runtestprotocol(item, nextitem=nextitem)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        if call.excinfo is not None:
            exc = call.excinfo
            self.reporter.emit(
                _Error(
                    str(item.nodeid),
                    (
                        _safe_str(getattr(exc.type, "__name__", "Exception"), 200),
                        _safe_str(exc.value),
                        _frames(exc.tb, self.workdir),
                    ),
                )
            )

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.reporter.emit(_Phase(report))

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        watch = self.watch.take(nodeid) if self.watch is not None else None
        self.reporter.emit(_Finish(nodeid, watch))


# ============================================================================ child work


def _run_pytest(job: dict[str, Any], reporter: _Reporter) -> None:
    import pytest

    watch = None
    if job.get("watch"):
        from .watch import WatchPlugin

        watch = WatchPlugin(job["workdir"])
    plugin = ReportPlugin(
        reporter, job["workdir"], job.get("order"), bool(job.get("runtime_policy", True)), watch
    )
    args = _pytest_args(job, job["_ini"])
    try:
        with _prebuilt_config():
            pytest.main(
                args, plugins=[plugin] if watch is None else [plugin, watch]
            )  # the sentinel: ReportPlugin.sessionfinish
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()


class _CallTimeout(BaseException):
    """Raised by the per-call alarm; BaseException so ``except Exception`` cannot eat it."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _CallTimeout("per-call timeout")


def _resolve(target: str) -> Any:
    module_name, _, qualname = target.partition(":")
    if not module_name or not qualname:
        raise ValueError(f"target must be 'module:qualname', got {target!r}")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _run_calls(job: dict[str, Any], reporter: _Reporter) -> None:
    per_call = float(job["per_call_timeout_s"])
    calls = job["calls"]
    for index, spec in enumerate(calls):
        try:
            signal.setitimer(signal.ITIMER_REAL, per_call)
            try:
                fn = _resolve(spec["target"])
                value = fn(*spec.get("args", []), **spec.get("kwargs", {}))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            plain = strict_plain(value)
            line = {"t": "call", "index": index, "ok": True, "value": plain}
        except BaseException as exc:  # noqa: BLE001 - every failure is an outcome
            name = "TimeoutError" if isinstance(exc, _CallTimeout) else type(exc).__name__
            line = {
                "t": "call",
                "index": index,
                "ok": False,
                "error_type": _safe_str(name, 200),
                "message": _safe_str(exc),
            }
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        reporter.emit(line)
    reporter.emit({"t": "end", "n": len(calls)})


def _import_hooks(hooks: list[dict[str, Any]]) -> list[tuple[Any, dict[str, Any]]]:
    """Import trusted setup hooks (only ``forgegym.`` targets) before the workdir is on
    ``sys.path``, so a workspace module cannot shadow what they import."""
    out = []
    for hook in hooks:
        target = hook["target"]
        if not target.startswith(_TRUSTED_PREFIX):
            raise ValueError(f"setup hook {target!r} is outside the forgegym package")
        out.append((_resolve(target), hook.get("kwargs", {})))
    return out


def _trusted_call_modules(job: dict[str, Any]) -> None:
    for spec in job.get("calls", []):
        module_name = spec["target"].partition(":")[0]
        if module_name.startswith(_TRUSTED_PREFIX):
            with contextlib.suppress(BaseException):
                importlib.import_module(module_name)


def _worker(job: dict[str, Any], report_fd: int, features: dict[str, str | None]) -> None:
    """The sandboxed process (PID 1 of its namespace where available). Never returns."""
    reporter = _Reporter(report_fd)
    code = 0
    try:
        reporter.start()
        base = sys._getframe()
        workdir = os.path.realpath(job["workdir"])
        job["workdir"] = workdir
        tmp = job["_tmp"]
        os.chdir(workdir)
        # stdin from /dev/null: the child never reads the parent's input.
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": workdir,
            "TMPDIR": tmp,
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.update(job.get("env") or {})
        os.environ.clear()
        os.environ.update(env)
        if "TZ" in env:
            time.tzset()
        tempfile.tempdir = tmp  # the zygote cached /tmp
        isolation.apply_rlimits(
            cpu_s=job.get("cpu_limit_s") or (float(job["timeout_s"]) + 1.0),
            memory_mb=job.get("memory_limit_mb"),
            nproc=int(job.get("_max_procs", isolation.DEFAULT_MAX_PROCS)),
        )
        features.update(isolation.confine_worker(job))
        # Bytecode: never read a .pyc (planted in the workspace, or in a writable cache by
        # a process the job started), never write one: nothing can exist under a device
        # file, not even for root, so every module is compiled from its source, where
        # the policy checks its bytes.
        sys.pycache_prefix = "/dev/null/no-bytecode"
        sys.dont_write_bytecode = True
        project = job.get("project") or {}
        hooks = _import_hooks(job.get("setup_hooks") or [])
        if job["kind"] == "calls":
            _trusted_call_modules(job)
            signal.signal(signal.SIGALRM, _on_alarm)
        for fn, kwargs in hooks:
            fn(**kwargs)
        excepthooks.install()
        # asyncio.run installs a SIGINT handler only over the default one; nothing in a
        # run needs SIGINT, and a handler installed by code under test would see frames.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if job.get("runtime_policy", True):
            # pytest's faulthandler plugin installs its handlers at configure, so a pytest
            # run denies handlers when collection starts (ReportPlugin.pytest_collection).
            why = policy.deny_signal_handlers() if job["kind"] == "calls" else None
            features["signal_handlers"] = "denied" if why is None else None
            # Trusted: the standard library, the harness's packages, the project's
            # installed dependencies and the pristine files of the workdir (by content).
            pristine = dict(job.get("pristine") or {})
            trusted = policy.install(
                workdir,
                base,
                extra_roots=[str(d) for d in project.get("site_dirs") or []],
                pristine=pristine,
                at_start=job.get("_pristine_at_start"),
            )
            if pristine and trusted is not None:
                reporter.emit(_Provenance(trusted, pristine, workdir))
            features["runtime_policy"] = "audit hooks"
        reporter.emit({"t": "isolation", "features": features})
        sys.path.insert(0, workdir)
        for i, rel in enumerate(project.get("import_paths") or [], start=1):
            sys.path.insert(i, os.path.join(workdir, rel))
        sys.path.extend(str(d) for d in project.get("site_dirs") or [])
        if job["kind"] == "pytest":
            _run_pytest(job, reporter)
        else:
            _run_calls(job, reporter)
    except BaseException as exc:  # noqa: BLE001
        code = 70
        with contextlib.suppress(BaseException):
            reporter.emit(
                {"t": "internal", "message": f"{type(exc).__name__}: {_safe_str(exc)}"[:_MAX_MSG]}
            )
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
    # os._exit: no atexit handlers or finalizers registered by model code run after us.
    os._exit(code)


def supervise(
    job: dict[str, Any],
    report_fd: int,
    ctl_fd: int,
    cgroup: str | None,
    shared: _Shared | None = None,
    files_fd: int | None = None,
) -> None:
    """The supervisor process: namespaces, fork the worker, reap, sweep. Never returns.

    Without ``shared`` (the baseline) it joins ``cgroup`` and unshares a network namespace
    itself; a zygote's supervisor inherits both from the zygote.
    Writes ``pid <worker pid>`` and later ``status <wait status>`` lines to ``ctl_fd``."""
    code = 0
    try:
        if shared is None:
            if cgroup:
                isolation.cgroup_join(cgroup)
            # Confined: bubblewrap already gave this interpreter an empty network namespace.
            netns = None if job.get("_confined") else isolation.unshare(isolation.CLONE_NEWNET)
            keep: tuple[int, ...] = ()
        else:
            netns, keep = shared.netns, (shared.pid,)
        isolation.set_child_subreaper()
        if files_fd is not None:  # the job's files, straight from the parent
            with os.fdopen(files_fd, "rb") as f:
                job["_files"] = json.loads(f.read() or b"[]")
        features: dict[str, str | None] = {"netns": netns, **isolation.prepare_job(job)}
        job["_tmp"] = tempfile.mkdtemp(prefix=".forgegym-tmp-", dir=job["workdir"])
        pid = os.fork()
        if pid == 0:
            os.close(ctl_fd)
            _worker(job, report_fd, features)
        os.close(report_fd)
        os.write(ctl_fd, f"pid {pid} {int(features['pidns'] is None)}\n".encode())
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        _sweep(cgroup, keep)
        residue = isolation.discard_job(job)
        if residue:
            os.write(ctl_fd, f"residue {json.dumps(residue[:2000])}\n".encode())
        os.write(ctl_fd, f"status {status}\n".encode())
    except BaseException:  # noqa: BLE001
        code = 71
    os._exit(code)


# ============================================================================ entry points


def _zygote_main(
    sock_fd: int, max_procs: int = isolation.DEFAULT_MAX_PROCS, confined: int = 0
) -> None:
    """Fork-server loop: one job at a time; forks a supervisor per job, relays its exit."""
    _preimport()
    shared = _zygote_setup(max_procs, bool(confined))
    _prebuild_config()
    # Everything alive now is shared read-mostly with every fork: move it out of the
    # collector's reach. Otherwise each run's gc.collect() (pytest calls it at unconfigure)
    # walks, and so copy-on-write-faults, the whole inherited heap: about half of a run.
    gc.collect()
    gc.freeze()
    sock = socket.socket(fileno=sock_fd)
    send_frame(sock, {"op": "ready", "pid": os.getpid(), "cgroup": shared.cgroup})
    while True:
        try:
            msg, fds = recv_frame(sock, max_fds=4)
        except (EOFError, OSError):
            _zygote_exit(shared)
        if msg.get("op") != "run" or len(fds) != 4:
            for fd in fds:
                os.close(fd)
            continue
        if not _zygote_run(sock, msg, fds, shared):
            _zygote_exit(shared)


def _zygote_run(sock: socket.socket, msg: dict[str, Any], fds: list[int], shared: _Shared) -> bool:
    """Run one job; False when this zygote must retire (its cgroup could not be emptied)."""
    report_w, out_w, err_w, files_r = fds
    job = msg["job"]
    cgroup = shared.cgroup
    if cgroup:
        isolation.cgroup_set_max(
            cgroup, int(job.get("_max_procs", isolation.DEFAULT_MAX_PROCS)) + 1
        )
    ctl_r, ctl_w = os.pipe()
    apid = os.fork()
    if apid == 0:
        try:
            sock.close()
            os.close(ctl_r)
            os.setsid()
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.close(out_w)
            os.close(err_w)
        except BaseException:  # noqa: BLE001
            os._exit(72)
        supervise(job, report_w, ctl_w, cgroup, shared, files_r)
    for fd in (report_w, out_w, err_w, ctl_w, files_r):
        os.close(fd)
    ctl = _CtlReader(ctl_r)
    line = ctl.line()
    worker = int(line.split()[1]) if line and line.startswith("pid ") else None
    pidns = bool(line and line.split()[-1] == "1")
    send_frame(sock, {"op": "started", "id": msg["id"], "pid": worker})
    pidfd = os.pidfd_open(apid)
    try:
        while True:
            ready, _, _ = select.select([sock.fileno(), pidfd], [], [])
            if pidfd in ready:
                break
            try:
                req, extra = recv_frame(sock)
            except (EOFError, OSError):  # parent gone: kill the run and leave
                _kill_run(worker, apid, pidns, cgroup)
                os.waitpid(apid, 0)
                _zygote_exit(shared)
            if req.get("op") == "kill" and req.get("id") == msg["id"]:
                _kill_run(worker, apid, pidns, cgroup)
    finally:
        os.close(pidfd)
    _, astatus, ru = os.wait4(apid, 0)
    rest = ctl.line()
    residue = None
    while rest and rest.startswith("residue "):
        residue = json.loads(rest[len("residue ") :])
        rest = ctl.line()
    os.close(ctl_r)
    # Nothing of this run may outlive it: empty the shared cgroup down to ourselves (with
    # a PID namespace it already is; this is the backstop). If that fails, retire.
    clean = not cgroup or isolation.cgroup_kill(cgroup, exclude=os.getpid(), rounds=200)
    wstatus = int(rest.split()[1]) if rest and rest.startswith("status ") else None
    send_frame(
        sock,
        {
            "op": "exit",
            "id": msg["id"],
            "supervisor_status": astatus,
            "worker_status": wstatus,
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "max_rss_kb": ru.ru_maxrss,
            "retire": not clean or residue is not None,
            "residue": residue,
        },
    )
    return clean and residue is None


class _CtlReader:
    """Line reader for the supervisor's ctl pipe (blocking)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    def line(self) -> str | None:
        while b"\n" not in self.buf:
            try:
                chunk = os.read(self.fd, 4096)
            except InterruptedError:
                continue
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()


def _subprocess_main(report_fd: int, ctl_fd: int) -> None:
    """Baseline: this fresh interpreter reads the job from stdin and becomes the supervisor."""
    job = json.loads(sys.stdin.buffer.read())
    isolation.set_dumpable(False)
    cgroup = isolation.cgroup_create(int(job.get("_max_procs", isolation.DEFAULT_MAX_PROCS)))
    if cgroup:
        # Told to the parent so it can remove it (we cannot remove our own cgroup).
        os.write(ctl_fd, f"cgroup {cgroup}\n".encode())
    supervise(job, report_fd, ctl_fd, cgroup)


def main(argv: list[str] | None = None) -> None:
    """``<bootstrap> zygote <sock_fd> [<max_procs>]`` or ``<bootstrap> subprocess <report_fd> <ctl_fd>``."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "zygote":
        _zygote_main(int(args[1]), *(int(x) for x in args[2:4]))
    elif args and args[0] == "subprocess":
        _subprocess_main(int(args[1]), int(args[2]))
    else:
        sys.stderr.write("usage: harness zygote <fd> | subprocess <report_fd> <ctl_fd>\n")
        sys.exit(2)
