"""Trust v2 (docs/design/004): provenance by content, function-level sanitizers, the
signer's ledger, pristine tests, and child data that is never a machine fault.

Each attack runs in the module a task lets the agent edit (``lib.py``) and is judged by
what the parent reads: a forged verdict must not read as passed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from forgegym.sandbox.jobs import PytestJob, RunStatus, pristine_manifest
from forgegym.sandbox.runners import ForkServerRunner, Runner
from forgegym.sandbox.runners.base import Control, Streams, decide

from .conftest import make_ws

pytestmark = pytest.mark.sandbox

#: The task's tests: they import the editable module and fail unless it is fixed.
TESTS = """\
import lib

def test_fixed():
    assert lib.answer() == 42

def test_also_fixed():
    assert lib.answer() + 1 == 43
"""
#: The editable module with its bug.
BUGGY = "def answer():\n    return 41\n"


@pytest.fixture(scope="module")
def pool() -> Runner:
    with ForkServerRunner(workers=2) as runner:
        yield runner


def _run(
    pool: Runner,
    tmp_path: Path,
    lib: str,
    extra: dict[str, str] | None = None,
    manifest: bool = True,
) -> object:
    files = {"lib.py": lib, "test_lib.py": TESTS, **(extra or {})}
    ws = make_ws(tmp_path, files)
    # The task's pristine files: the buggy module and the tests as the episode started.
    pristine = pristine_manifest({"lib.py": BUGGY, "test_lib.py": TESTS, **(extra or {})})
    return pool.run(
        PytestJob(
            workdir=str(ws),
            targets=["test_lib.py"],
            pristine=pristine if manifest else {},
        )
    )


def _passed(result: object) -> set[str]:
    return {nodeid for nodeid, ok in result.verdicts.items() if ok}  # type: ignore[attr-defined]


def test_the_honest_fix_passes(pool: Runner, tmp_path: Path) -> None:
    result = _run(pool, tmp_path, "def answer():\n    return 42\n")
    assert result.status is RunStatus.COMPLETED, result.detail
    assert _passed(result) == {"test_lib.py::test_fixed", "test_lib.py::test_also_fixed"}


@pytest.mark.parametrize(
    "attack",
    [
        # Frames laundered through stdlib consumers of an iterator (issue 36).
        "import collections, traceback\nFRAMES = collections.Counter(traceback.walk_stack(None))\n",
        "import traceback\nFRAMES = sorted(traceback.walk_stack(None), key=id)\n",
        "import collections, traceback\nkeep = []\n"
        "collections.namedtuple('X', map(keep.append, traceback.walk_stack(None)))\n",
        "import traceback\nS = traceback.StackSummary.extract(traceback.walk_stack(None), "
        "capture_locals=True)\n",
        "import inspect\nS = inspect.stack()\n",
        "import sys\nF = sys._getframe(1)\n",
    ],
    ids=["counter", "sorted", "namedtuple-map", "capture-locals", "inspect-stack", "getframe"],
)
def test_frames_never_reach_changed_code(pool: Runner, tmp_path: Path, attack: str) -> None:
    result = _run(pool, tmp_path, BUGGY + attack)
    assert not _passed(result)
    assert "refused" in result.detail or "refused" in result.stderr_tail  # type: ignore[attr-defined]


def test_ordinary_python_in_changed_code_runs(pool: Runner, tmp_path: Path) -> None:
    # What an honest fix may use: logging, enum, namedtuple, dataclasses, typing,
    # warnings, traceback formatting of its own exception.
    lib = (
        "import collections, dataclasses, enum, logging, traceback, typing, warnings\n"
        "log = logging.getLogger(__name__)\n"
        "Color = enum.Enum('Color', 'RED GREEN')\n"
        "Pair = collections.namedtuple('Pair', 'a b')\n"
        "T = typing.TypeVar('T')\n"
        "@dataclasses.dataclass\nclass Box:\n    value: int = 42\n"
        "def answer():\n"
        "    log.warning('computing')\n"
        "    warnings.warn('old', DeprecationWarning)\n"
        "    try:\n        1 / 0\n    except ZeroDivisionError:\n"
        "        text = traceback.format_exc()\n"
        "    assert 'ZeroDivisionError' in text\n"
        "    return Box().value if Pair(1, 2).a == 1 and Color.RED else 0\n"
    )
    result = _run(pool, tmp_path, lib)
    assert result.status is RunStatus.COMPLETED, (result.detail, result.stderr_tail)
    assert _passed(result) == {"test_lib.py::test_fixed", "test_lib.py::test_also_fixed"}


def test_exceptions_outside_pytests_hooks_are_printed_not_refused(
    pool: Runner, tmp_path: Path
) -> None:
    # A server thread that raises after its test (pytest's thread hook is gone by then)
    # and a ``__del__`` that raises, with the interpreter's default hooks restored as
    # code does: the C printer compiled a segment of ``threading.py`` to place carets, a
    # compile the policy refused (the elephas corpus case failed one run in three).
    lib = (
        "import sys, threading\n"
        "class Noisy:\n"
        "    def __del__(self):\n"
        "        raise RuntimeError('in __del__')\n"
        "def _serve():\n"
        "    raise OSError('server socket closed')\n"
        "def answer():\n"
        "    threading.excepthook = threading.__excepthook__\n"
        "    sys.unraisablehook = sys.__unraisablehook__\n"
        "    thread = threading.Thread(target=_serve, daemon=True)\n"
        "    thread.start()\n"
        "    thread.join()\n"
        "    Noisy()\n"
        "    return 42\n"
    )
    result = _run(pool, tmp_path, lib)
    assert result.status is RunStatus.COMPLETED, (result.detail, result.stderr_tail)
    assert _passed(result) == {"test_lib.py::test_fixed", "test_lib.py::test_also_fixed"}


def test_pristine_project_code_may_introspect(pool: Runner, tmp_path: Path) -> None:
    # A pristine helper module of the project reads frames and compiles text at import
    # (typing_extensions, attrs and pydantic do); the agent's fix calls it.
    helper = (
        "import inspect, sys\n"
        "CALLER = sys._getframe(0).f_globals['__name__']\n"
        "DEPTH = len(inspect.stack())\n"
        "FORTY_TWO = eval(compile('6 * 7', '<helper>', 'eval'))\n"
    )
    fix = "import helper\ndef answer():\n    return helper.FORTY_TWO\n"
    result = _run(pool, tmp_path, fix, {"helper.py": helper})
    assert result.status is RunStatus.COMPLETED, (result.detail, result.stderr_tail)
    assert len(_passed(result)) == 2


def test_a_call_job_trusts_the_pristine_project_as_the_pytest_job_does(
    pool: Runner, tmp_path: Path
) -> None:
    """The behaviour checks' call job gets the pytest job's provenance: a pristine module
    that reads frames (attrs, cron-descriptor: every call of 11 sampled real tasks
    crashed) runs, and the same module with other bytes is still refused."""
    from forgegym.sandbox.jobs import CallJob, CallSpec

    helper = "import sys\nCALLER = sys._getframe(0).f_globals['__name__']\n"
    fix = "import helper\ndef answer():\n    return helper.CALLER\n"
    ws = make_ws(tmp_path, {"lib.py": fix, "test_lib.py": TESTS, "helper.py": helper})
    calls = [CallSpec(target="lib:answer")]

    def run(pristine: dict[str, str]) -> object:
        return pool.run(CallJob(workdir=str(ws), calls=calls, pristine=pristine))

    trusted = run(pristine_manifest({"lib.py": BUGGY, "test_lib.py": TESTS, "helper.py": helper}))
    assert trusted.status is RunStatus.COMPLETED, (trusted.detail, trusted.stderr_tail)
    assert [(o.ok, o.value) for o in trusted.outcomes] == [(True, "helper")]
    for pristine in ({}, pristine_manifest({"lib.py": BUGGY, "helper.py": "X = 1\n"})):
        refused = run(pristine)
        assert not any(o.ok for o in refused.outcomes), refused


def test_a_changed_helper_loses_its_trust(pool: Runner, tmp_path: Path) -> None:
    # The same introspection from a file whose bytes are not the pristine ones.
    changed_helper = "import sys\nF = sys._getframe(0).f_back\n"
    fix = "import helper\ndef answer():\n    return 42\n"
    files = {"lib.py": fix, "test_lib.py": TESTS, "helper.py": changed_helper}
    ws = make_ws(tmp_path, files)
    pristine = pristine_manifest({"lib.py": BUGGY, "test_lib.py": TESTS, "helper.py": "X = 1\n"})
    result = pool.run(PytestJob(workdir=str(ws), targets=["test_lib.py"], pristine=pristine))
    assert not _passed(result)


#: A second test file of the task, imported after the editable module.
SECOND = "import lib\n\ndef test_second():\n    assert lib.answer() == 42\n"


@pytest.mark.parametrize(
    "attack",
    [
        # The second test file rewritten on disk before pytest imports it.
        "import pathlib\n"
        "pathlib.Path(__file__).with_name('test_second.py').write_text("
        "'def test_second():\\n    assert True\\n')\n",
        # A module planted in sys.modules under the second test file's name.
        "import sys, types\n"
        "fake = types.ModuleType('test_second')\n"
        "fake.__file__ = __file__.replace('lib.py', 'test_second.py')\n"
        "def test_second():\n    pass\n"
        "fake.test_second = test_second\n"
        "sys.modules['test_second'] = fake\n",
    ],
    ids=["rewritten-on-disk", "planted-module"],
)
def test_replaced_tests_are_not_the_tests(pool: Runner, tmp_path: Path, attack: str) -> None:
    files = {"lib.py": BUGGY + attack, "test_lib.py": TESTS, "test_second.py": SECOND}
    ws = make_ws(tmp_path, files)
    pristine = pristine_manifest({"lib.py": BUGGY, "test_lib.py": TESTS, "test_second.py": SECOND})
    result = pool.run(
        PytestJob(workdir=str(ws), targets=["test_lib.py", "test_second.py"], pristine=pristine)
    )
    assert "test_second.py::test_second" not in _passed(result)


@pytest.mark.parametrize(
    "attack",
    [
        # The report plugin reached through pytest's config, a module global while a
        # test runs: it holds no verdict state to replace (issue 36's forgery).
        "import sys\n"
        "def answer():\n"
        "    config = sys.modules['_pytest.assertion.util']._config\n"
        "    for plugin in config.pluginmanager.get_plugins():\n"
        "        for name in ('_phases', '_errors'):\n"
        "            if hasattr(plugin, name):\n"
        "                setattr(plugin, name, {})\n"
        "    return 41\n",
        # The items reached through the session: their runtest shadowed on the instance.
        "import sys\n"
        "def answer():\n"
        "    config = sys.modules['_pytest.assertion.util']._config\n"
        "    session = config.pluginmanager.get_plugin('session')\n"
        "    for item in session.items:\n"
        "        item.runtest = lambda: None\n"
        "    return 41\n",
        # A computed-name patch of unittest's TestCase (issue 36: 9 of 12 forged).
        "setattr(getattr(__import__('unit' + 'test'), 'Test' + 'Case'), 'r' + 'un', "
        "lambda self, result=None: None)\n" + BUGGY,
    ],
    ids=["plugin-state", "item-runtest", "unittest-run"],
)
def test_verdict_state_cannot_be_forged(pool: Runner, tmp_path: Path, attack: str) -> None:
    result = _run(pool, tmp_path, attack)
    # The first test may have run before the patch; the one after it must not pass.
    assert "test_lib.py::test_also_fixed" not in _passed(result)


def test_unittest_suites_keep_their_verdicts(pool: Runner, tmp_path: Path) -> None:
    tests = (
        "import unittest\nimport lib\n\n"
        "class TestLib(unittest.TestCase):\n"
        "    def test_fixed(self):\n        self.assertEqual(lib.answer(), 42)\n"
    )
    attack = (
        "setattr(getattr(__import__('unit' + 'test'), 'Test' + 'Case'), 'r' + 'un', "
        "lambda self, result=None: None)\n" + BUGGY
    )
    ws = make_ws(tmp_path, {"lib.py": attack, "test_lib.py": tests})
    pristine = pristine_manifest({"lib.py": BUGGY, "test_lib.py": tests})
    result = pool.run(PytestJob(workdir=str(ws), targets=["test_lib.py"], pristine=pristine))
    assert not _passed(result)


class _Done(Control):
    """A finished child tree that exited cleanly (for feeding :func:`decide`)."""

    def __init__(self) -> None:
        self.finished = True
        self.worker_status = 0

    def filenos(self) -> list[int]:
        return []

    def on_ready(self, fd: int) -> None:
        return None

    def kill(self) -> None:
        return None

    def abandon(self) -> None:
        return None


def _signed(objects: list[object]) -> bytes:
    """A report stream authenticated as the child's signer writes it."""
    import hmac

    key = os.urandom(32)
    lines = [json.dumps({"t": "key", "k": key.hex()}).encode()]
    for seq, obj in enumerate(objects):
        body = json.dumps(obj).encode()
        tag = hmac.new(key, b"%d:" % seq + body, hashlib.sha256).hexdigest().encode()
        lines.append(body + b" " + tag)
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize(
    "record",
    [
        {"t": "test", "nodeid": "t.py::x", "outcome": "passed", "duration_s": 1e999},
        {"t": "test", "nodeid": "t.py::x", "outcome": "passed", "duration_s": [1]},
        {"t": "test", "nodeid": "t.py::x", "outcome": "failed", "watch": {"lines": [1e999]}},
        {"t": "test", "nodeid": "t.py::x", "outcome": "passed", "frames": 7},
    ],
    ids=["inf", "list", "watch-inf", "frames-int"],
)
def test_hostile_report_data_is_the_codes_failure(tmp_path: Path, record: dict) -> None:
    # Whatever the child wrote, the parent reads a crash or a failure, never a fault of
    # the machine (which would make the reward invalid, and TRL skip it).
    report_r, report_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    for fd in (out_w, err_w):
        os.close(fd)
    os.write(
        report_w,
        _signed(
            [
                record,
                {
                    "t": "end",
                    "collected": ["t.py::x"],
                    "ran": 1,
                    "exitstatus": 0,
                    "collection_errors": [],
                },
            ]
        ),
    )
    os.close(report_w)
    streams = Streams(report_r, out_r, err_r, 1 << 20)
    for fd in list(streams.fds):
        while streams.read(fd):
            pass
    result = decide(
        PytestJob(workdir=str(tmp_path), targets=["t.py"]), _Done(), streams, False, False, 0.1
    )
    streams.close()
    assert result.fault is None
    assert result.status is not RunStatus.INTERNAL_ERROR


def test_decorated_pristine_tests_are_the_tests(pool: Runner, tmp_path: Path) -> None:
    # A library's decorator (freezegun's freeze_time, mock.patch) wraps the pristine
    # test: the function pytest collects is the library's wrapper, which is trusted code.
    tests = (
        "from unittest import mock\nimport lib\n\n"
        "@mock.patch('os.getcwd', return_value='/elsewhere')\n"
        "def test_fixed(getcwd):\n    assert lib.answer() == 42\n"
    )
    fix = "def answer():\n    return 42\n"
    ws = make_ws(tmp_path, {"lib.py": fix, "test_lib.py": tests})
    pristine = pristine_manifest({"lib.py": BUGGY, "test_lib.py": tests})
    result = pool.run(PytestJob(workdir=str(ws), targets=["test_lib.py"], pristine=pristine))
    assert _passed(result) == {"test_lib.py::test_fixed"}, (result.detail, result.records)


def test_code_a_conftest_imports_cannot_disarm_the_checks(pool: Runner, tmp_path: Path) -> None:
    # The project's (pristine) conftest imports the editable module before pytest
    # collects: code there runs before the integrity snapshot is armed. It disables the
    # pristine-test check and rewrites the second test file; neither may forge a pass.
    conftest = "import lib  # noqa: F401\n"
    attack = BUGGY + (
        "import pathlib, sys\n"
        "ledger = sys.modules.get('forgegym.sandbox.ledger')\n"
        "if ledger is not None:\n"
        "    setattr(ledger._Ledger, '_not_pri' + 'stine', lambda self, item: None)\n"
        "pathlib.Path(__file__).with_name('test_second.py').write_text("
        "'def test_second():\\n    assert True\\n')\n"
    )
    files = {
        "lib.py": attack,
        "test_lib.py": TESTS,
        "test_second.py": SECOND,
        "conftest.py": conftest,
    }
    ws = make_ws(tmp_path, files)
    pristine = pristine_manifest(
        {"lib.py": BUGGY, "test_lib.py": TESTS, "test_second.py": SECOND, "conftest.py": conftest}
    )
    result = pool.run(
        PytestJob(
            workdir=str(ws),
            targets=["test_lib.py", "test_second.py"],
            pristine=pristine,
            conftest=True,
        )
    )
    assert not _passed(result), (result.status, result.detail)


# ------------------------------------------------------------------ D7, D8: allowances
#: What the catalogue's projects do at import or in their tests, written into the
#: editable module (the honest fix makes it changed code): croniter's
#: ``platform.architecture()`` (``file`` run through ``subprocess``), pyparsing's
#: ``replaced_by_pep8`` (a pristine helper sets its wrapper's ``__kwdefaults__``), the
#: same helper when it is the changed file, and click's pager and editor (a command run
#: with a pipe, and one through the shell).
PEP8_HELPER = (
    "import functools\n"
    "def replaced_by_pep8(name, fn):\n"
    "    @functools.wraps(fn)\n"
    "    def _inner(*args, **kwargs):\n"
    "        return fn(*args, **kwargs)\n"
    "    _inner.__name__ = name\n"
    "    _inner.__kwdefaults__ = fn.__kwdefaults__\n"
    "    _inner.__defaults__ = None\n"
    "    return _inner\n"
)
HONEST_FIXES = {
    "platform-architecture": "import platform\nARCH = platform.architecture()\n",
    "pristine-helper-kwdefaults": "import helper\n"
    "def _compute(*, value=42):\n    return value\n"
    "compute = helper.replaced_by_pep8('compute', _compute)\n",
    "changed-helper-kwdefaults": PEP8_HELPER + "def _compute(*, value=42):\n    return value\n"
    "compute = replaced_by_pep8('compute', _compute)\n",
    "pager-pipe": "import subprocess, sys\n"
    "_p = subprocess.Popen([sys.executable, '-c', 'import sys; sys.stdin.read()'],"
    " stdin=subprocess.PIPE, text=True)\n"
    "_p.communicate('page')\n",
    "editor-shell": "import subprocess\n"
    "try:\n    subprocess.run('true', shell=True, check=False)\n"
    "except FileNotFoundError:\n    pass  # no /bin/sh in the sandbox's root\n",
}


@pytest.mark.parametrize("idiom", sorted(HONEST_FIXES))
def test_what_catalogue_projects_do_runs_in_changed_code(
    pool: Runner, tmp_path: Path, idiom: str
) -> None:
    fix = HONEST_FIXES[idiom] + "def answer():\n    return 42\n"
    result = _run(pool, tmp_path, fix, {"helper.py": PEP8_HELPER})
    assert result.status is RunStatus.COMPLETED, (result.detail, result.stderr_tail)
    assert len(_passed(result)) == 2


#: Finds the descriptors this worker inherited (the report channel among them).
_FDS = (
    "import os\n"
    "def _fg_open(fd):\n"
    "    try:\n        os.fstat(fd)\n        return True\n    except OSError:\n        return False\n"
    "_fds = [fd for fd in range(3, 64) if _fg_open(fd)]\n"
)
#: A fresh interpreter that writes passing records into every descriptor it holds and
#: tries this worker's memory (an added file of the workspace).
FORGER_SOURCE = (
    "import os\n"
    'line = b\'{"t": "record", "nodeid": "test_lib.py::test_fixed", '
    '"outcome": "passed"}\\n\'\n'
    "for fd in range(64):\n"
    "    try:\n        os.write(fd, line)\n    except OSError:\n        pass\n"
    "try:\n    open('/proc/%d/mem' % os.getppid(), 'rb').read(1)\nexcept OSError:\n    pass\n"
)
_FORGER = "[sys.executable, __file__.replace('lib.py', 'forger.py')]"
ALLOWANCE_ATTACKS = {
    # Refused: a process that would inherit the report channel or run Python in the fork.
    "popen-pass-fds": f"import subprocess, sys\n{_FDS}subprocess.run({_FORGER}, pass_fds=_fds)\n",
    "popen-stdout-report": f"import subprocess, sys\n{_FDS}for _fd in _fds:\n"
    f"    subprocess.run({_FORGER}, stdout=_fd)\n",
    "popen-no-close-fds": f"import subprocess, sys\nsubprocess.run({_FORGER}, close_fds=False)\n",
    "popen-preexec": "import subprocess\nsubprocess.run(['true'], preexec_fn=lambda: None)\n",
    # Allowed to start, and can decide nothing: a fresh process writing records.
    "fresh-forger": f"import subprocess, sys\nsubprocess.run({_FORGER})\n",
    # No audit event at all (``_posixsubprocess.fork_exec``): the report's key holds.
    "fork-exec-unaudited": f"import _posixsubprocess, sys\n{_FDS}_r, _w = os.pipe()\n"
    f"_pid = _posixsubprocess.fork_exec({_FORGER}, [sys.executable.encode()], True,"
    " tuple(_fds), None, None, -1, -1, -1, -1, -1, -1, _r, _w, False, False, False,"
    " None, None, None, -1, None, False)\nos.waitpid(_pid, 0)\n",
    # The trusted spawn, its target and its machinery chosen by changed code.
    "syscmd-file-own-target": "import platform\nplatform._syscmd_file('/proc/1/mem')\n",
    "patched-fork-exec": f"import platform, subprocess, sys\n{_FDS}"
    "_real = subprocess._fork_exec\n"
    "def _fg_fork_exec(args, exe, close, pass_fds, *rest):\n"
    f"    return _real({_FORGER}, [sys.executable.encode()], False, tuple(_fds), *rest)\n"
    "subprocess._fork_exec = _fg_fork_exec\nplatform.architecture()\n",
    # Defaults and code of trusted functions: directly, through a pristine helper's
    # write, and laundered through functools.
    "pytest-kwdefaults": "import _pytest.runner as _r\n"
    "_r.call_and_report.__kwdefaults__ = {'log': False}\n",
    "pytest-defaults-none": "import _pytest.runner as _r\n_r.runtestprotocol.__defaults__ = None\n",
    "pytest-code-swap": "import _pytest.runner as _r\n"
    "def _fg():\n    return None\n_r.check_interactive_exception.__code__ = _fg.__code__\n",
    "own-code-from-pytest": "import _pytest.runner as _r\n"
    "def _fg(call, report):\n    return None\n"
    "_fg.__code__ = _r.check_interactive_exception.__code__\n",
    "wraps-laundered": "import functools, _pytest.runner as _r\n"
    "def _fg(*, log=False):\n    return None\n"
    "functools.update_wrapper(_r.call_and_report, _fg, assigned=('__kwdefaults__',), updated=())\n",
    "helper-write-laundered": "import helper, _pytest.runner as _r\n"
    "helper.set_kwdefaults(_r.call_and_report, {'log': False})\n",
    "test-function-defaults": "import sys\n"
    "def answer():\n"
    "    for module in list(sys.modules.values()):\n"
    "        test = getattr(module, 'test_also_fixed', None)\n"
    "        if test is not None:\n"
    "            test.__defaults__ = ()\n"
    "    return 41\n",
}
#: A pristine helper that writes any function's defaults on its caller's behalf.
SETTER_HELPER = PEP8_HELPER + "def set_kwdefaults(fn, value):\n    fn.__kwdefaults__ = value\n"


@pytest.mark.parametrize("attack", sorted(ALLOWANCE_ATTACKS))
def test_the_allowances_hand_changed_code_nothing(
    pool: Runner, tmp_path: Path, attack: str
) -> None:
    lib = BUGGY + ALLOWANCE_ATTACKS[attack]
    extra = {"helper.py": SETTER_HELPER, "forger.py": FORGER_SOURCE}
    result = _run(pool, tmp_path, lib, extra)
    assert not _passed(result), (result.status, result.detail, result.stderr_tail)
    assert result.status is not RunStatus.INTERNAL_ERROR, result.detail


#: A pristine test helper the tests import late (inside the test), and the module the
#: attacks below put in its place on disk, from a process that inherits nothing (D7).
LATE_TESTS = (
    "import lib\n\ndef test_fixed():\n    import helper\n    assert helper.check(lib.answer())\n"
)
LATE_HELPER = "def check(value):\n    return value == 42\n"
_EVIL_HELPER = "def check(value):\n    return True # " + "x" * 8 + "\n"
_IN_A_FRESH_PROCESS = (
    "import os, subprocess, sys\n"
    "_here = os.path.dirname(os.path.abspath(__file__))\n"
    "subprocess.run([sys.executable, '-c', _SCRIPT, _here], check=False)\n"
    "def answer():\n    return 41\n"
)
LATE_HELPER_ATTACKS = {
    # The helper's source rewritten before the test imports it.
    "rewrite-source": "_SCRIPT = r'''import sys, os\n"
    f"open(os.path.join(sys.argv[1], 'helper.py'), 'w').write({_EVIL_HELPER!r})\n'''\n",
    # Bytecode of another source planted where the import system would look for the
    # pristine helper's (its own __pycache__ and the temporary folder's), with the
    # pristine source's size and modification time in its header.
    "planted-bytecode": "_SCRIPT = r'''import sys, os, py_compile, tempfile, importlib.util\n"
    "src = os.path.join(sys.argv[1], 'helper.py')\n"
    "st = os.stat(src)\n"
    f"evil = {_EVIL_HELPER!r}.ljust(st.st_size)[: st.st_size]\n"
    "fake = os.path.join(tempfile.mkdtemp(), 'helper.py')\n"
    "open(fake, 'w').write(evil)\n"
    "os.utime(fake, ns=(st.st_atime_ns, st.st_mtime_ns))\n"
    "for prefix in (None, os.path.join(tempfile.gettempdir(), 'pycache')):\n"
    "    sys.pycache_prefix = prefix\n"
    "    target = importlib.util.cache_from_source(src)\n"
    "    os.makedirs(os.path.dirname(target), exist_ok=True)\n"
    "    py_compile.compile(fake, cfile=target, doraise=True)\n'''\n",
}


@pytest.mark.parametrize("attack", sorted(LATE_HELPER_ATTACKS))
def test_a_fresh_process_cannot_replace_a_pristine_module_before_its_import(
    pool: Runner, tmp_path: Path, attack: str
) -> None:
    lib = LATE_HELPER_ATTACKS[attack] + _IN_A_FRESH_PROCESS
    files = {"lib.py": lib, "test_lib.py": LATE_TESTS, "helper.py": LATE_HELPER}
    ws = make_ws(tmp_path, files)
    pristine = pristine_manifest(
        {"lib.py": BUGGY, "test_lib.py": LATE_TESTS, "helper.py": LATE_HELPER}
    )
    result = pool.run(PytestJob(workdir=str(ws), targets=["test_lib.py"], pristine=pristine))
    assert not _passed(result), (result.status, result.detail, result.stderr_tail)
    assert result.status is not RunStatus.INTERNAL_ERROR, result.detail


def test_a_late_imported_pristine_helper_still_grades_an_honest_fix(
    pool: Runner, tmp_path: Path
) -> None:
    lib = "def answer():\n    return 42\n"
    files = {"lib.py": lib, "test_lib.py": LATE_TESTS, "helper.py": LATE_HELPER}
    ws = make_ws(tmp_path, files)
    pristine = pristine_manifest(
        {"lib.py": BUGGY, "test_lib.py": LATE_TESTS, "helper.py": LATE_HELPER}
    )
    result = pool.run(PytestJob(workdir=str(ws), targets=["test_lib.py"], pristine=pristine))
    assert _passed(result) == {"test_lib.py::test_fixed"}, (result.detail, result.stderr_tail)


#: Tests that compare against a pristine data file, not compiled (design note 004, D11).
DATA_TESTS = (
    "import json, os\nimport lib\n\n"
    "def test_fixed():\n"
    "    here = os.path.dirname(os.path.abspath(__file__))\n"
    "    with open(os.path.join(here, 'data', 'expected.json')) as f:\n"
    "        expected = json.load(f)['answer']\n"
    "    assert lib.answer() == expected\n"
)
DATA_FILE = '{"answer": 42}\n'
_FORGED_DATA = '{"answer": 41}\n'
_DATA_SCRIPT_HEAD = (
    "import os, subprocess, sys\n"
    "_here = os.path.dirname(os.path.abspath(__file__))\n"
    "_data = os.path.join(_here, 'data')\n"
    "_target = os.path.join(_data, 'expected.json')\n"
    f"_forged = {_FORGED_DATA!r}\n"
)
#: Ways to make the tests read other bytes under the pristine data file's name, each from
#: the worker itself (the audit hook sees it) and from a fresh process (it does not).
_DATA_WRITES = {
    "write": "open(_target, 'w').write(_forged)\n",
    "truncate-and-append": "os.truncate(_target, 0)\nopen(_target, 'a').write(_forged)\n",
    "unlink-and-recreate": "os.unlink(_target)\nopen(_target, 'w').write(_forged)\n",
    "replace-from-tmp": "import tempfile\n"
    "fd, tmp = tempfile.mkstemp(dir=_here)\nos.write(fd, _forged.encode())\nos.close(fd)\n"
    "os.replace(tmp, _target)\n",
    "rename-the-folder": "os.rename(_data, os.path.join(_here, 'old_data'))\n"
    "os.mkdir(_data)\nopen(_target, 'w').write(_forged)\n",
    "chmod-then-write": "os.chmod(_target, 0o666)\nopen(_target, 'w').write(_forged)\n",
    "hard-link-then-write": "os.link(_target, os.path.join(_here, 'alias'))\n"
    "open(os.path.join(_here, 'alias'), 'w').write(_forged)\n",
}
DATA_ATTACKS = {
    **{
        f"in-the-worker/{name}": _DATA_SCRIPT_HEAD
        + "try:\n"
        + "".join("    " + line + "\n" for line in body.splitlines())
        + "except OSError:\n    pass\n"
        + "def answer():\n    return 41\n"
        for name, body in _DATA_WRITES.items()
    },
    **{
        f"fresh-process/{name}": _DATA_SCRIPT_HEAD
        + f"_SCRIPT = {(_DATA_SCRIPT_HEAD.split(chr(10), 1)[1].replace('__file__', 'sys.argv[1]') + body)!r}\n"
        + "subprocess.run([sys.executable, '-c', 'import os, sys\\n' + _SCRIPT,"
        " os.path.join(_here, 'x')], check=False)\n" + "def answer():\n    return 41\n"
        for name, body in _DATA_WRITES.items()
    },
}


@pytest.mark.parametrize("attack", sorted(DATA_ATTACKS))
def test_nothing_in_the_job_can_change_a_pristine_data_file_the_tests_read(
    pool: Runner, tmp_path: Path, attack: str
) -> None:
    files = {
        "lib.py": DATA_ATTACKS[attack],
        "test_lib.py": DATA_TESTS,
        "data/expected.json": DATA_FILE,
    }
    ws = make_ws(tmp_path, files)
    pristine = pristine_manifest(
        {"lib.py": BUGGY, "test_lib.py": DATA_TESTS, "data/expected.json": DATA_FILE}
    )
    result = pool.run(PytestJob(workdir=str(ws), targets=["test_lib.py"], pristine=pristine))
    assert not _passed(result), (result.status, result.detail, result.stderr_tail)
    assert result.status is not RunStatus.INTERNAL_ERROR, result.detail


def test_pristine_data_files_stay_readable_and_new_files_writable(
    pool: Runner, tmp_path: Path
) -> None:
    """The honest control: the fix passes, and tests may still create, write, rename and
    delete their own files beside the pristine ones (in the project and its folders)."""
    tests = DATA_TESTS + (
        "\ndef test_writes_its_own_files():\n"
        "    here = os.path.dirname(os.path.abspath(__file__))\n"
        "    for folder in (here, os.path.join(here, 'data'), os.path.join(here, 'made')):\n"
        "        os.makedirs(folder, exist_ok=True)\n"
        "        path = os.path.join(folder, 'out.txt')\n"
        "        with open(path, 'w') as f:\n"
        "            f.write('x')\n"
        "        os.replace(path, path + '.done')\n"
        "        os.unlink(path + '.done')\n"
        "    with open('relative.txt', 'w') as f:\n"
        "        f.write('cwd is writable')\n"
    )
    files = {"lib.py": "def answer():\n    return 42\n", "test_lib.py": tests}
    files["data/expected.json"] = DATA_FILE
    ws = make_ws(tmp_path, files)
    pristine = pristine_manifest(
        {"lib.py": BUGGY, "test_lib.py": tests, "data/expected.json": DATA_FILE}
    )
    result = pool.run(PytestJob(workdir=str(ws), targets=["test_lib.py"], pristine=pristine))
    assert _passed(result) == {
        "test_lib.py::test_fixed",
        "test_lib.py::test_writes_its_own_files",
    }, (
        result.detail,
        result.stderr_tail,
    )


def test_changed_code_may_turn_text_into_untrusted_code(pool: Runner, tmp_path: Path) -> None:
    """D12: six's ``exec_`` at import and an ``eval`` of an expression run in changed
    code, and what they make is as untrusted as the code that made it."""
    fix = (
        "exec('def answer():\\n    return 40 + TWO\\n', globals(), globals().update(TWO=2))\n"
        "assert eval(compile('6 * 7', '<expr>', 'eval')) == 42\n"
    )
    result = _run(pool, tmp_path, fix)
    assert result.status is RunStatus.COMPLETED, (result.detail, result.stderr_tail)
    assert _passed(result) == {"test_lib.py::test_fixed", "test_lib.py::test_also_fixed"}


#: What D12 must not hand changed code: text compiled under a name the policy trusts, or
#: trusted code run over the caller's globals; and what it makes stays untrusted.
COMPILE_ATTACKS = {
    "frozen-name": "exec(compile('import sys\\nF = sys._getframe(1)', '<frozen evil>', 'exec'))\n",
    "stdlib-name-own-bytes": "import os\n"
    "code = compile(open(os.__file__).read(), os.__file__, 'exec')\n"
    "exec(code, {'__name__': 'os_again'})\n",
    "stdlib-name-other-bytes": "import os\n"
    "exec(compile('import sys\\nF = sys._getframe(1)', os.__file__, 'exec'))\n",
    "trusted-function-code": "import _pytest.runner as _r\n"
    "exec(_r.check_interactive_exception.__code__, {'call': None, 'report': None})\n",
    "pristine-test-name": "import os\n"
    "exec(compile('def test_fixed():\\n    pass\\n', os.path.abspath('test_lib.py'), 'exec'))\n",
    "made-code-takes-frames": "exec('import sys\\nF = sys._getframe(0).f_back')\n",
    "made-code-patches-pytest": "exec('import _pytest.runner as r\\n"
    "r.check_interactive_exception = lambda call, report: False')\n",
}


@pytest.mark.parametrize("attack", sorted(COMPILE_ATTACKS))
def test_text_turned_into_code_gets_no_trust(pool: Runner, tmp_path: Path, attack: str) -> None:
    fixed = "def answer():\n    return 42\n"
    result = _run(pool, tmp_path, fixed + COMPILE_ATTACKS[attack])
    # Refused where it happens (or the tampering seen), though the module is the fix.
    caught = "sandbox policy: refused" in result.stderr_tail or "tampered" in result.detail
    assert caught, (result.status, result.detail, result.stderr_tail)
    assert not _passed(result), (result.status, result.detail, result.stderr_tail)
