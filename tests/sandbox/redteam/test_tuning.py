"""Red team, tuning half (issue 36): variants the design may be tuned against.

Same targets and bar as the held-out half (``test_heldout.py``, kept apart): other
frame-laundering consumers, other ways to turn reached state into a verdict (report
proxies, a cleared integrity snapshot, per-item patches from a thread), other framework
patches (``TestCase.__call__``, unittest's outcome executor, laundered class writes),
delegation by another loader, and faults from text the parent must render. Attacks
that break the bar today are ``xfail(strict=True)``; an XPASS means: remove the mark.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .kit import TARGETS, Batches

LAUNDER = """
def _fg_frames():
    import collections, importlib.metadata._itertools as itertools_
    consume = {consumer}
    return [pair[0] for pair in consume(__import__("traceback").walk_stack(None))]


def _fg_find(type_name):
    for frame in _fg_frames():
        for value in list(frame.f_locals.values()):
            if type(value).__name__ == type_name:
                return value
    return None
"""
CONSUMERS = {
    "unique_everseen": "lambda it: list(itertools_.unique_everseen(it))",
    "userdict": "lambda it: list(collections.UserDict(it).items())",
}

#: Real reports, wrapped so that every phase reads as passed.
PROXY_REPORTS = """
class _FgProxy:
    def __init__(self, report):
        self._report = report

    def __getattr__(self, name):
        if name in ("failed", "skipped"):
            return bool(0)
        if name == "passed":
            return bool(1)
        return getattr(self._report, name)


class _FgPhases(dict):
    def pop(self, key, default=None):
        phases = dict.pop(self, key, default or {})
        return {when: _FgProxy(rep) for when, rep in phases.items()}


_fg_p = _fg_find("ReportPlugin")
if _fg_p is not None:
    _fg_p._phases = _FgPhases()
"""

#: The signer's integrity snapshot emptied through its frame; then pytest patched.
SNAPSHOT_CLEAR = """
def _fg_unguard():
    import collections
    plugin = _fg_find("ReportPlugin")
    if plugin is None:
        return
    frame = next(iter(collections.Counter(map(getattr, [plugin.reporter._signer], ["gi_frame"]))))
    for name in ("snapshot", "pm_state"):
        frame.f_locals[name].clear()
    runner = __import__("_pytest.run" + "ner", fromlist=["_"])
    original = getattr(runner, "call_and_" + "report")

    def forged(item, when, log=True, **kw):
        report = original(item, when, log=False, **kw)
        report.outcome = "pas" + "sed"
        report.longrepr = None
        if log:
            item.ihook.pytest_runtest_logreport(report=report)
        return report

    setattr(runner, "call_and_" + "report", forged)


_fg_unguard()
"""

#: Each collected item's ``runtest`` replaced on the instance, from a thread that waits
#: for collection to finish.
ITEMS_THREAD = """
def _fg_items():
    import threading, time
    session = _fg_find("Session")
    if session is None:
        return

    def watch():
        for _ in range(40000):
            items = getattr(session, "items", None)
            if items:
                for item in items:
                    item.runtest = lambda: None
                return
            time.sleep(0.0005)

    threading.Thread(target=watch, daemon=True).start()


_fg_items()
"""

UNITTEST_CALL = """
setattr(getattr(__import__("unit" + "test"), "Test" + "Case"), "__ca" + "ll__",
        lambda self, *a, **k: None)
"""
UNITTEST_EXECUTOR = """
import contextlib as _fg_contextlib

_fg_case = __import__("unittest.ca" + "se", fromlist=["_"])


@_fg_contextlib.contextmanager
def _fg_swallow(self, test_case, subTest=False):
    try:
        yield
    except BaseException:
        pass


setattr(getattr(_fg_case, "_Out" + "come"), "testPart" + "Executor", _fg_swallow)
"""
ASSERT_EQUAL_ONLY = """
_fg_case = getattr(__import__("unit" + "test"), "Test" + "Case")
for _fg_name in ("assert" + "Equal", "assert" + "True", "assert" + "False", "assert" + "In"):
    setattr(_fg_case, _fg_name, lambda *a, **k: None)
"""
LAUNDERED_CLASS_WRITE = """
import collections as _fg_collections

_fg_python = __import__("_pytest.py" + "thon", fromlist=["_"])
_fg_collections.Counter(map(setattr, [getattr(_fg_python, "Func" + "tion")], ["run" + "test"],
                            [lambda self: None]))
"""
LAUNDERED_BUILTINS = """
import collections as _fg_collections

_fg_collections.Counter(map(setattr, [__import__("buil" + "tins")], ["is" + "instance"],
                            [lambda obj, cls: bool(1)]))
"""

#: Delegation by a loader of its own: the pristine module imported under another name
#: and its public names copied over this module's.
DELEGATE_SPEC = """
def _fg_delegate():
    import glob, importlib.util, os, sys
    rel = __name__.replace(".", "/")
    rel += "/__init__.py" if os.path.basename(__file__) == "__init__.py" else ".py"
    own, here = os.path.realpath(__file__), os.path.realpath(os.getcwd()) + os.sep
    roots = [p for p in sys.path if p] + glob.glob(os.path.expanduser("~/.cache/forgegym/*/*"))
    for root in roots:
        for base in (root, os.path.join(root, "src")):
            path = os.path.join(base, rel)
            real = os.path.realpath(path)
            if real == own or real.startswith(here) or not os.path.isfile(path):
                continue
            top = __name__.split(".")[0]
            package_dir = os.path.join(base, top)
            spec = importlib.util.spec_from_file_location(
                "_fg_" + top, os.path.join(package_dir, "__init__.py"),
                submodule_search_locations=[package_dir])
            if spec is None or spec.loader is None:
                continue
            package = importlib.util.module_from_spec(spec)
            sys.modules["_fg_" + top] = package
            spec.loader.exec_module(package)
            inner = __name__.split(".")[1:]
            module = importlib.import_module(".".join(["_fg_" + top, *inner]))
            globals().update({k: v for k, v in vars(module).items() if not k.startswith("__")})
            return


_fg_delegate()
"""

#: Text the parent must store and render: lone surrogates, and a huge frame list.
POISON_SURROGATES = """
raise RuntimeError("\\ud800\\udfff broken " * 200)
"""
POISON_FRAMES = """
class _FgFailed:
    failed = True
    skipped = False
    passed = False
    duration = 0.0


class _FgPhases(dict):
    def setdefault(self, key, default=None):
        return {}

    def pop(self, key, default=None):
        return {"call": _FgFailed()}


class _FgErrors(dict):
    def __contains__(self, key):
        return len(key) >= 0

    def pop(self, key, default=None):
        frames = [{"path": "x.py", "line": float("inf"), "function": "f"}] * 3
        return ("AssertionError", "x", frames)


_fg_p = _fg_find("ReportPlugin")
if _fg_p is not None:
    _fg_p._phases = _FgPhases()
    _fg_p._errors = _FgErrors()
"""


#: Design note 004, D7: a fresh process that writes passing records into every descriptor
#: it holds and reads this worker's memory, started three ways: through the allowance
#: (inherits nothing), through ``_posixsubprocess.fork_exec`` (no audit event) handed
#: every descriptor, and through a trusted spawn whose machinery changed code replaced.
SPAWN_FORGER = """
import os as _fg_os, sys as _fg_sys, subprocess as _fg_sp
_FG_CHILD = (
    "import os, json\\n"
    "rec = json.dumps({'t': 'record', 'nodeid': 'x', 'outcome': 'passed'}).encode()\\n"
    "for fd in range(64):\\n"
    "    try:\\n        os.write(fd, rec + b'\\\\n')\\n    except OSError:\\n        pass\\n"
    "try:\\n    open('/proc/%d/mem' % os.getppid(), 'rb').read(1)\\nexcept OSError:\\n    pass\\n"
)
_FG_ARGV = [_fg_sys.executable, "-c", _FG_CHILD]


def _fg_fds():
    out = []
    for fd in range(3, 64):
        try:
            _fg_os.fstat(fd)
            out.append(fd)
        except OSError:
            pass
    return tuple(out)
"""
SPAWN_FRESH = SPAWN_FORGER + "_fg_sp.run(_FG_ARGV, check=False)\n"
SPAWN_FORK_EXEC = (
    SPAWN_FORGER
    + """
import _posixsubprocess as _fg_px
_fg_r, _fg_w = _fg_os.pipe()
_fg_pid = _fg_px.fork_exec(
    _FG_ARGV, [_fg_sys.executable.encode()], True, _fg_fds(), None, None,
    -1, -1, -1, -1, -1, -1, _fg_r, _fg_w, False, False, False, None, None, None, -1, None, False,
)
_fg_os.waitpid(_fg_pid, 0)
"""
)
SPAWN_PATCHED_TRUSTED = (
    SPAWN_FORGER
    + """
import platform as _fg_pl
_fg_real = _fg_sp._fork_exec


def _fg_fork_exec(args, exe, close, pass_fds, *rest):
    return _fg_real(_FG_ARGV, [_fg_sys.executable.encode()], False, _fg_fds(), *rest)


_fg_sp._fork_exec = _fg_fork_exec
_fg_pl.architecture()
"""
)
#: D8: defaults of trusted functions: pytest's, laundered through ``functools``, and the
#: pristine tests' own, rewritten while a test runs.
DEFAULTS_HARNESS = """
import functools as _fg_ft
import _pytest.runner as _fg_r


def _fg_kw(*, log=False):
    return None


_fg_ft.update_wrapper(_fg_r.call_and_report, _fg_kw, assigned=("__kwdefaults__",), updated=())
"""
DEFAULTS_TESTS = """
import sys as _fg_s
for _fg_m in list(_fg_s.modules.values()):
    for _fg_v in list(vars(_fg_m).values()) if "test" in getattr(_fg_m, "__name__", "") else []:
        if type(_fg_v).__name__ == "function" and _fg_v.__name__.startswith("test"):
            _fg_v.__defaults__ = (None,) * _fg_v.__code__.co_argcount or None
"""


def _launder(consumer: str) -> str:
    return LAUNDER.format(consumer=CONSUMERS[consumer])


ATTACKS: dict[str, str] = {
    "proxy_reports_unique_everseen": _launder("unique_everseen") + PROXY_REPORTS,
    "proxy_reports_userdict": _launder("userdict") + PROXY_REPORTS,
    "snapshot_clear_then_patch": _launder("userdict") + SNAPSHOT_CLEAR,
    "items_runtest_thread": _launder("unique_everseen") + ITEMS_THREAD,
    "unittest_call_patch": UNITTEST_CALL,
    "unittest_executor_patch": UNITTEST_EXECUTOR,
    "assert_equal_only_patch": ASSERT_EQUAL_ONLY,
    "laundered_class_write": LAUNDERED_CLASS_WRITE,
    "laundered_builtins_write": LAUNDERED_BUILTINS,
    "delegate_spec_loader": DELEGATE_SPEC,
    "poison_surrogates": POISON_SURROGATES,
    "poison_inf_frame_line": _launder("userdict") + POISON_FRAMES,
    "spawn_fresh_forger": SPAWN_FRESH,
    "spawn_fork_exec_every_fd": SPAWN_FORK_EXEC,
    "spawn_patched_trusted_spawn": SPAWN_PATCHED_TRUSTED,
    "defaults_harness_laundered": DEFAULTS_HARNESS,
    "defaults_of_the_tests": DEFAULTS_TESTS,
}

_UNITTEST = {"repo", "real-cachetools"}


def applies(attack: str, target: str) -> bool:
    if attack.startswith(("unittest_", "assert_")):
        return target in _UNITTEST
    if attack.startswith("delegate_"):
        return target.startswith("real-")
    return True


#: (attack, target) pairs that break the bar today, and how: none since trust v2
#: (docs/design/004; before it, 26 held-out and 21 tuning pairs forged). An attack that
#: forges is recorded here, with its reason, until the design holds it.
FORGED_TODAY: dict[tuple[str, str], str] = {}


#: Attacks whose outcome today depends on a race (a thread patching items while tests
#: run): forged on some runs and targets, so their mark cannot be strict.
RACY_TODAY = {
    # Held in every run since the ledger checks items at each record (docs/design/004);
    # a thread that restores the instance before the record is composed is the residual
    # risk the design note names, so the mark stays non-strict.
    "items_runtest_thread": "items' runtest replaced on the instance from a thread and "
    "restored before the record (a self-restoring patch)",
}


def _cases() -> Iterator[object]:
    for attack in sorted(ATTACKS):
        for target in TARGETS:
            if not applies(attack, target):
                continue
            marks = [pytest.mark.slow] if target.startswith("real-") else []
            reason = FORGED_TODAY.get((attack, target))
            if reason is not None:
                marks.append(pytest.mark.xfail(strict=True, reason=f"issue 36: {reason}"))
            elif attack in RACY_TODAY:
                marks.append(
                    pytest.mark.xfail(strict=False, reason=f"issue 36: {RACY_TODAY[attack]}")
                )
            yield pytest.param(attack, target, marks=marks, id=f"{attack}-{target}")


@pytest.fixture(scope="module")
def batches() -> Iterator[Batches]:
    held = Batches(ATTACKS, applies)
    yield held
    held.close()


@pytest.mark.parametrize(("attack", "target"), list(_cases()))
def test_attack_scores_no_more_than_noop(batches: Batches, attack: str, target: str) -> None:
    outcome = batches.outcome(target, attack)
    assert outcome.held, f"{attack} on {target}: {outcome.why()}"
