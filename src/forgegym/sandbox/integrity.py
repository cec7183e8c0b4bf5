"""The integrity snapshot the signer compares the trusted state against (see
:func:`forgegym.sandbox.harness._signer`): which modules, globals and hooks are guarded,
the early snapshot taken when the signer starts, the full one taken when pytest starts
collecting, the comparison run before every signed line, and the lazily bound globals
bound before the snapshot (so binding them is not read as tampering).

The snapshot's state lives only in the closures :func:`_integrity_check` returns, and
only the signer's suspended frame holds those. Standard library only.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

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
#: The least CPU seconds of a job between two comparisons of every guarded global with
#: the snapshot (the signer's; before the sentinel too: design note 004, D13).
FULL_CHECK_INTERVAL_S = 0.01
#: The share of a job's CPU the full comparisons may take (D13): each waits until the
#: job has run the previous one's cost over this share (a comparison of ~9,000
#: identities cost ~0.8 ms; every 10 ms they took ~3% of a real task's job).
FULL_CHECK_SHARE = 0.02
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


def _integrity_check(
    early: list[tuple[str, Any, tuple[str, ...], tuple[Any, ...]]], tampered: list[str]
) -> tuple[Callable[[Any], None], Callable[[bool], str | None]]:
    """The signer's check, built when it starts: ``take_snapshot(config)`` records (once)
    the trusted state (after appending to ``tampered`` what changed since ``early``) and
    ``changed(full)`` says what changed since (None: nothing; ``full=False``: the plugin
    manager and the guarded hooks only, not the globals). Every name the two use is a
    local bound here, at the signer's start: rebinding a module attribute or a builtin
    changes nothing inside."""
    import operator

    to_tuple, is_instance, get_attr, zip_, len_, map_ = tuple, isinstance, getattr, zip, len, map
    sorted_, type_, dict_ = sorted, type, dict
    is_not = operator.is_not
    modules = sys.modules
    mutable = _MUTABLE_GLOBALS
    guarded_prefixes = _GUARDED_MODULES
    guarded_hooks = _GUARDED_HOOKS
    # A module's import metadata decides nothing (``importlib.reload(builtins)`` in six's
    # tests rebinds ``builtins.__spec__``).
    module_metadata = _MODULE_METADATA
    snapshot: list[tuple[str, dict[str, Any], tuple[str, ...], tuple[Any, ...]]] = []
    pm_state: list[Any] = []

    def take_snapshot(config: Any) -> None:
        if snapshot:  # taken once, at the first arm
            return
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

    def changed(full: bool = True) -> str | None:
        if full:  # every guarded global and class attribute (~9,000 identities, ~1 ms)
            for name, namespace, keys, values in snapshot:
                if True in map_(is_not, map_(namespace.get, keys), values):
                    for key, value in zip_(keys, values):
                        if namespace.get(key) is not value:
                            return f"{name}.{key} was rebound"
        if pm_state:  # the run protocol's plugins and hook implementations (cheap)
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

    return take_snapshot, changed


def next_full_check(began: float, ended: float) -> float:
    """The job CPU time at which the next full comparison is due, after one that ran
    from ``began`` to ``ended`` (``time.process_time``)."""
    return ended + max(FULL_CHECK_INTERVAL_S, (ended - began) / FULL_CHECK_SHARE)


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
