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
   ``tamper`` record, and the run fails.

Residual risk, written down: the objects of a pytest session reachable through the
``request`` fixture (items, the session, the fixture manager) are ordinary mutable
instances, and a patch of a trusted global that restores itself before the next line
is signed is not seen. FlakyRepair therefore also judges source faults with the
pristine tests, and hidden Bugfix checks stay differential (values compared in the
parent, which never sends expected values into the child).

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
import pathlib
import select
import signal
import socket
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

from . import excepthooks, isolation, policy, pristine_mounts  # noqa: F401 - warm in zygotes
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
from .protocol import StrictValueError, read_report, recv_frame, refused, send_frame, strict_plain

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


#: Trusted modules whose globals the verdict code depends on (prefixes of sys.modules keys).
_GUARDED_MODULES = (
    "_pytest",
    "pytest",
    "pluggy",
    "forgegym.sandbox",
    "json",
    "_json",
    "builtins",
    # unittest-style suites run through TestCase.run and its assertion helpers: a
    # computed-name patch of either (issue 36: 9 of 12 real tasks forged) is tampering.
    "unittest",
)
#: Globals trusted code itself rebinds during a run (pytest's assertion plugin per test).
_MUTABLE_GLOBALS = frozenset(
    {
        ("_pytest.assertion.util", "_reprcompare"),
        ("_pytest.assertion.util", "_assertion_pass"),
        ("_pytest.assertion.util", "_config"),
    }
)
#: Globals pytest binds on first use, between the signer's start and the snapshot.
#: And what pytest's own legacypath plugin rebinds at configure (after the conftests).
_LAZY_GLOBALS = frozenset(
    {
        ("_pytest.doctest", "RUNNER_CLASS"),
        ("_pytest.doctest", "CHECKER_CLASS"),
        ("_pytest.config.Config", "_getini_unknown_type"),
    }
)
#: Hooks that run a test or turn its run into a verdict.
_GUARDED_HOOKS = (
    "pytest_runtest_protocol",
    "pytest_runtest_logstart",
    "pytest_runtest_logfinish",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_pyfunc_call",
    "pytest_report_teststatus",
    "pytest_fixture_setup",
    "pytest_collection_modifyitems",
    "pytest_collectreport",
)


#: A module's import metadata decides nothing (``importlib.reload(builtins)`` in six's
#: tests rebinds ``builtins.__spec__``).
_MODULE_METADATA = frozenset(
    {"__spec__", "__loader__", "__file__", "__cached__", "__doc__", "__package__", "__path__"}
)


def _early_snapshot() -> list[tuple[str, Any, tuple[str, ...], tuple[Any, ...]]]:
    """The classes and callable globals of the guarded modules already imported, taken
    when the signer starts: before any workspace code exists (so this plain function may
    read globals). Code that the project's conftest files import runs before the full
    snapshot is armed; a patch made there is caught against this one."""
    early: list[tuple[str, Any, tuple[str, ...], tuple[Any, ...]]] = []
    for name in sorted(sys.modules):
        if not name.startswith(_GUARDED_MODULES):
            continue
        found: Any = getattr(sys.modules[name], "__dict__", None)
        if type(found) is not dict:
            continue
        keys = tuple(
            k
            for k, v in found.items()
            if (name, k) not in _MUTABLE_GLOBALS
            and (name, k) not in _LAZY_GLOBALS
            and (callable(v) or isinstance(v, types.ModuleType))
        )
        early.append((name, found, keys, tuple(found[k] for k in keys)))
        for value in tuple(found.values()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                attrs = value.__dict__
                where = f"{name}.{value.__qualname__}"
                # Behaviour only (functions, descriptors): pytest's configure stores
                # instances on classes (``pytestPDB._config``), which decide nothing.
                names = tuple(
                    k
                    for k, v in attrs.items()
                    if (where, k) not in _LAZY_GLOBALS
                    and (callable(v) or isinstance(v, (staticmethod, classmethod, property)))
                )
                # The live mapping (not a copy): the check reads what the class holds then.
                early.append((where, attrs, names, tuple(attrs[k] for k in names)))
    return early


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
    to_tuple, is_instance, get_attr, zip_, len_, map_ = tuple, isinstance, getattr, zip, len, map
    sorted_, type_, dict_, memview = sorted, type, dict, memoryview
    is_not, is_ = operator.is_not, operator.is_
    arm_type = _Arm
    emit_code, arm_code = ctx["emit"], ctx["arm"]
    emitters, hooks = ctx["emitters"], ctx["hooks"]
    multicall_code, g, mg = ctx["multicall"], ctx["globals"], ctx["multicall_globals"]
    modules = sys.modules
    mutable = _MUTABLE_GLOBALS
    guarded_prefixes = _GUARDED_MODULES
    guarded_hooks = _GUARDED_HOOKS
    snapshot: list[tuple[str, dict[str, Any], tuple[str, ...], tuple[Any, ...]]] = []
    pm_state: list[Any] = []
    tampered: list[str] = []
    seq = 0
    ok = False

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

    def take_snapshot(config: Any) -> None:
        for where, space, keys, values in early:
            if True in map_(is_not, map_(space.get, keys), values):
                for key, value in zip_(keys, values):
                    if space.get(key) is not value:
                        tampered.append(f"{where}.{key} was rebound before collection")
                        break
                break
        for name in sorted_(modules):
            if not name.startswith(guarded_prefixes):
                continue
            module = modules[name]
            namespace: Any = get_attr(module, "__dict__", None)
            if type_(namespace) is not dict_:
                continue
            keys = to_tuple(
                k for k in namespace if (name, k) not in mutable and k not in module_metadata
            )
            snapshot.append((name, namespace, keys, to_tuple(namespace[k] for k in keys)))
            # Class attributes too: ``TestReport.from_item_and_call = ...`` is a plain
            # type setattr, which no audit event reports.
            for value in to_tuple(namespace.values()):
                if is_instance(value, type_) and get_attr(value, "__module__", None) == name:
                    attrs = value.__dict__
                    names = to_tuple(attrs)
                    where = f"{name}.{value.__qualname__}"
                    snapshot.append((where, attrs, names, to_tuple(attrs[k] for k in names)))
        pm = config.pluginmanager
        callers = [get_attr(pm.hook, h, None) for h in guarded_hooks]
        pm_state.extend([pm, config.hook, pm.hook, pm._inner_hookexec, pm._hookexec])
        pm_state.append(to_tuple(pm._name2plugin.items()))
        for caller in callers:
            impls = to_tuple(caller.get_hookimpls()) if caller is not None else ()
            pm_state.append((caller, caller._hookexec if caller is not None else None, impls))
            pm_state.append(to_tuple(i.function for i in impls))

    def changed() -> str | None:
        for name, namespace, keys, values in snapshot:
            if True in map_(is_not, map_(namespace.get, keys), values):
                for key, value in zip_(keys, values):
                    if namespace.get(key) is not value:
                        return f"{name}.{key} was rebound"
        if pm_state:
            pm = pm_state[0]
            if (
                pm.hook is not pm_state[2]
                or pm_state[1] is not pm_state[0].hook
                or pm._inner_hookexec is not pm_state[3]
            ):
                return "the plugin manager was rewired"
            plugins = to_tuple(pm._name2plugin.items())
            if len_(plugins) != len_(pm_state[5]) or True in map_(
                is_not, (p for _, p in plugins), (p for _, p in pm_state[5])
            ):
                names = {n for n, _ in pm_state[5]} ^ {n for n, _ in plugins}
                return f"plugins registered or removed: {sorted_(names)[:5]}"
            i = 6
            for h in guarded_hooks:
                caller, hookexec, impls = pm_state[i]
                if caller is not None:
                    now = to_tuple(caller.get_hookimpls())
                    functions = to_tuple(x.function for x in now)
                    hooked: Any = get_attr(pm.hook, h, None)
                    if (
                        hooked is not caller
                        or caller._hookexec is not hookexec
                        or len_(now) != len_(impls)
                        or True in map_(is_not, now, impls)
                        or True in map_(is_not, functions, pm_state[i + 1])
                    ):
                        return f"hook {h} was changed"
                i += 2
        return None

    # A module's import metadata decides nothing (``importlib.reload(builtins)`` in six's
    # tests rebinds ``builtins.__spec__``).
    module_metadata = _MODULE_METADATA
    early = _early_snapshot()
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
            if not snapshot:
                take_snapshot(obj.config)
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
            what = changed()
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


def _bind_lazy_pytest_globals() -> None:
    """Bind the globals pytest's doctest plugin binds on first use (``RUNNER_CLASS``,
    ``CHECKER_CLASS``: a project's ``--doctest-modules``) before the integrity snapshot,
    so that binding is not read as tampering, and code under test never chooses them:
    a rebinding later is still tampering."""
    doctest: Any = sys.modules.get("_pytest.doctest")
    if doctest is None:
        return
    if getattr(doctest, "RUNNER_CLASS", 0) is None:
        doctest.RUNNER_CLASS = doctest._init_runner_class()
    if getattr(doctest, "CHECKER_CLASS", 0) is None:
        doctest.CHECKER_CLASS = doctest._init_checker_class()


def _bind_lazy_stdlib_globals() -> None:
    """Bind ``unittest.mock``'s ``file_spec`` and ``open_spec`` as ``mock_open`` does on
    its first call, before the integrity snapshot: the first ``mock_open`` of a suite is
    not tampering, a later rebinding still is."""
    mock: Any = sys.modules.get("unittest.mock")
    if mock is None:
        return
    import _io

    if getattr(mock, "file_spec", 0) is None:
        mock.file_spec = list(set(dir(_io.TextIOWrapper)).union(set(dir(_io.BytesIO))))
    if getattr(mock, "open_spec", 0) is None:
        mock.open_spec = list(set(dir(_io.open)))


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


def _ini_overrides(options: dict[str, Any]) -> list[str]:
    """``-o key=value`` pairs (the parent validated the keys; each is one argv entry)."""
    out: list[str] = []
    for key, value in sorted(options.items()):
        out += ["-o", f"{key}={value}"]
    return out


def _project_overrides(project: dict[str, Any] | None) -> list[str]:
    """A user's repository (its own configuration is the ``-c`` file): its addopts as the
    parent reduced them, no required plugins (plugin autoload is off: they are not
    loaded) and no ``pythonpath`` (relative to the staged file; the job's import roots
    are on ``sys.path`` instead)."""
    if not project:
        return []
    import shlex

    addopts = shlex.join(str(a) for a in project.get("addopts") or [])
    return ["-o", f"addopts={addopts}", "-o", "required_plugins=", "-o", "pythonpath="]


def _pytest_args(job: dict[str, Any], ini: str) -> list[str]:
    workdir = job["workdir"]
    targets = job["targets"]
    for t in targets:
        path = t.split("::", 1)[0]
        if t.startswith("-") or os.path.isabs(path) or ".." in path.split("/"):
            raise ValueError(f"invalid target {t!r}")
    return [
        "-c",
        ini,
        f"--rootdir={workdir}",
        "-q",
        "-p",
        "no:cacheprovider",
        *([] if job.get("conftest") else ["--noconftest"]),
        *_project_overrides(job.get("project")),
        *_ini_overrides(job.get("ini_options") or {}),
        "--tb=no",
        "-rN",
        "--show-capture=no",
        "--no-header",
        "--color=no",
        "-o",
        "console_output_style=classic",
        *targets,
    ]


# ---------------------------------------------------------------- prebuilt pytest config

# ``pytest.main`` starts by building a plugin manager and importing and registering every
# builtin plugin (``_pytest.config.get_config``): ~10 ms of pure setup that depends on
# nothing of the run but the ``-p no:...`` arguments. A zygote does it once
# (``_prebuild_config``); each fork consumes that pristine copy once, with the run's real
# invocation parameters, and anything that does not match falls back to pytest's own path.
_PREBUILT: Any = None
_PREBUILT_ARGS = ("-p", "no:cacheprovider")


def _plugin_exclusions(args: Any) -> list[str]:
    """The ``-p no:...`` arguments pytest's ``consider_preparse`` would act on."""
    out: list[str] = []
    i, n = 0, len(args)
    while i < n:
        opt = args[i]
        i += 1
        if not isinstance(opt, str):
            continue
        if opt == "-p":
            if i >= n:
                break
            parg = args[i]
            i += 1
        elif opt.startswith("-p"):
            parg = opt[2:]
        else:
            continue
        if isinstance(parg, str) and parg.strip().startswith("no:"):
            out.append(parg.strip())
    return out


def _prebuild_config() -> None:
    """Zygote: build the config ``get_config`` would build for our arguments."""
    global _PREBUILT
    import _pytest.config

    _PREBUILT = None
    with contextlib.suppress(Exception):
        _PREBUILT = _pytest.config.get_config(list(_PREBUILT_ARGS), None, prog="pytest.main()")


@contextlib.contextmanager
def _prebuilt_config() -> Any:
    """Child: let ``pytest.main`` take the zygote's prebuilt config (once)."""
    import _pytest.config

    original = _pytest.config.get_config
    cfg_type = _pytest.config.Config

    def get_config(args: Any = None, plugins: Any = None, *, prog: str | None = None) -> Any:
        global _PREBUILT
        # Restored at once: the run's integrity snapshot must see pytest's own function.
        _pytest.config.get_config = original
        config, _PREBUILT = _PREBUILT, None
        if (
            config is None
            or prog != "pytest.main()"
            or not args
            or _plugin_exclusions(args) != _plugin_exclusions(_PREBUILT_ARGS)
            or os.environ.get("PYTEST_DEBUG")  # read by the plugin manager's constructor
        ):
            return original(args, plugins, prog=prog)
        config.invocation_params = cfg_type.InvocationParams(
            args=args, plugins=plugins, dir=pathlib.Path.cwd()
        )
        return config

    _pytest.config.get_config = get_config
    try:
        yield
    finally:
        _pytest.config.get_config = original


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


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def _sweep(cgroup: str | None, keep: tuple[int, ...] = ()) -> None:
    """Kill and reap every remaining descendant (we are their subreaper). ``keep``: pids in
    the cgroup that are not ours to kill (the zygote that owns a shared cgroup)."""
    me = os.getpid()
    for _ in range(200):
        if cgroup:
            isolation.cgroup_kill(cgroup, exclude=(me, *keep), rounds=1)
        for child in _children(me):
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return
        time.sleep(0.002)


class _Shared:
    """Isolation a zygote sets up once for all its runs (see ``_zygote_setup``)."""

    def __init__(self, pid: int, cgroup: str | None, netns: str | None) -> None:
        self.pid = pid  # the zygote: a member of ``cgroup``, never killed by a sweep
        self.cgroup = cgroup  # already joined by the zygote; forks inherit it
        self.netns = netns  # None: the zygote is in an empty network namespace


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


def _preimport() -> None:
    """Zygote warm-up: import everything a run needs so that forks start hot."""
    import pkgutil

    import _pytest
    import pytest  # noqa: F401

    for mod in pkgutil.walk_packages(_pytest.__path__, "_pytest."):
        if mod.name.startswith(("_pytest.pytester", "_pytest._py")):
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(mod.name)
    # faulthandler and readline are imported by pytest.main itself (the faulthandler and
    # capture plugins); readline is a C extension, so loading it per run costs a dlopen.
    for name in (
        "unittest",
        "unittest.mock",
        "doctest",
        "pdb",
        "decimal",
        "fractions",
        "faulthandler",
        "readline",
        "forgegym.sandbox.hooks",
    ):
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    policy.warm()


def _zygote_setup(max_procs: int, confined: bool = False) -> _Shared:
    """Per-zygote isolation, paid once instead of per run:

    * network: the zygote unshares an empty network namespace (only a down ``lo``) and
      every supervisor and worker it forks inherits it. Runs never overlap in time on one
      zygote (one job at a time, and the previous tree is dead before the next fork), so
      the namespace holds no process, socket or listener of another run; the only state a
      run could leave there is the configuration of that ``lo`` (as root), which gives a
      later run nothing it could not do itself: no route leaves the namespace. Landlock
      (ABI >= 4) denies TCP bind/connect on top.
    * pids cgroup: the zygote joins one cgroup and its forks are born in it (a v1 cgroup
      migration costs ~10 ms per join). ``pids.max`` is ``max_procs + 1`` so the run's
      tree (supervisor, worker, descendants) keeps the same bound of ``max_procs``; after
      every run the cgroup is swept down to the zygote alone before the next one starts.
    """
    # A job must not read the memory of the process that forked it (/proc/<pid>/mem).
    isolation.set_dumpable(False)
    if confined:  # bubblewrap gave us an empty network namespace; per-job PID namespaces
        return _Shared(os.getpid(), None, None)
    cgroup = isolation.cgroup_create(max_procs + 1)
    if cgroup is not None and not isolation.cgroup_join(cgroup):
        isolation.cgroup_remove(cgroup)
        cgroup = None
    netns = isolation.unshare(isolation.CLONE_NEWNET)
    return _Shared(os.getpid(), cgroup, netns)


def _zygote_exit(shared: _Shared) -> None:
    if shared.cgroup and isolation.cgroup_leave(shared.cgroup):
        isolation.cgroup_remove(shared.cgroup)
    os._exit(0)


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


def _kill_run(worker: int | None, apid: int, pidns: bool, cgroup: str | None) -> None:
    """Kill the worker's tree. With a PID namespace killing the worker (its init) is enough;
    otherwise the cgroup is swept too (the supervisor sweeps its own orphans)."""
    if worker is not None:
        with contextlib.suppress(OSError):
            os.kill(worker, signal.SIGKILL)
    if not pidns:
        if cgroup:
            isolation.cgroup_kill(cgroup, exclude=(apid, os.getpid()), rounds=5)
        if worker is None:
            with contextlib.suppress(OSError):
                os.killpg(apid, signal.SIGKILL)


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
