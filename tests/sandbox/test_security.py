"""The security boundary: hostile workspaces against both runners.

Every case asserts that the outcome is a failure (or is contained), that the host is
untouched (nothing written outside the workspace, no surviving process) and that the next
run on the same runner is normal. No case asserts wall-clock times.
"""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path

import pytest

from forgegym.sandbox.isolation import probe
from forgegym.sandbox.jobs import CallJob, CallSpec, PytestJob, RunStatus
from forgegym.sandbox.runners import Runner

from .conftest import assert_healthy, make_ws, procs_in

GOOD_AND_BAD = """\
def test_good():
    assert True

def test_bad():
    assert 1 == 2
"""
IDS = ["test_t.py::test_good", "test_t.py::test_bad"]


def _feature(name: str) -> tuple[bool, str]:
    feat = next(f for f in probe() if f.name == name)
    return feat.active, feat.detail


def _run(runner: Runner, ws: Path, **kw: object):  # noqa: ANN202 - PytestResult
    job = PytestJob(workdir=str(ws), targets=["test_t.py"], **kw)  # type: ignore[arg-type]
    return runner.run(job)


def _contained(runner: Runner, ws: Path, root: Path) -> None:
    """Nothing survived, and the next run on the same runner is normal. The baseline
    keeps no state between runs, so its canary run is covered by the functional tests
    (saves a cold interpreter per case on 2-core CI)."""
    assert procs_in(ws) == []
    if runner.name == "forkserver":
        assert_healthy(runner, root)


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("import os\n\ndef test_good():\n    os._exit(0)\n", RunStatus.CRASHED),
        ("import os\nos._exit(0)\n\ndef test_good():\n    pass\n", RunStatus.CRASHED),
        ("import sys\n\ndef test_good():\n    sys.exit(0)\n", RunStatus.COMPLETED),
        ("import sys\nsys.exit(0)\n\ndef test_good():\n    pass\n", RunStatus.CRASHED),
        ("def test_good():\n    raise KeyboardInterrupt\n", RunStatus.CRASHED),
        (
            "import pytest\npytest.skip('bye', allow_module_level=True)\n\ndef test_good():\n    pass\n",
            RunStatus.ID_MISMATCH,
        ),
    ],
    ids=["os_exit_test", "os_exit_import", "sys_exit_test", "sys_exit_import", "kbint", "modskip"],
)
def test_early_exits_never_pass(
    runner: Runner, tmp_path: Path, body: str, status: RunStatus
) -> None:
    ws = make_ws(tmp_path, {"test_t.py": body})
    res = _run(runner, ws, expected_ids=["test_t.py::test_good"])
    assert res.status is status, res.detail
    assert res.verdicts == {"test_t.py::test_good": False}
    _contained(runner, ws, tmp_path)


CONFTEST = """\
import pytest
open(__file__ + ".loaded", "w").close()

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    rep.outcome = "passed"
"""
PLUGIN = "open(__file__ + '.loaded', 'w').close()\n"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("conftest.py", CONFTEST),
        ("pytest.ini", "[pytest]\naddopts = -k test_good -p evilplugin\n"),
        ("setup.cfg", "[tool:pytest]\naddopts = -k test_good -p evilplugin\n"),
        ("tox.ini", "[pytest]\naddopts = -k test_good -p evilplugin\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-k test_good -p evilplugin'\n"),
        ("sitecustomize.py", "open(__file__ + '.loaded', 'w').close()\nimport builtins\n"),
        ("usercustomize.py", "open(__file__ + '.loaded', 'w').close()\n"),
        ("evil.pth", "import os; open(os.path.join(os.getcwd(), 'pth.loaded'), 'w').close()\n"),
    ],
)
def test_workspace_config_has_no_effect(
    runner: Runner, tmp_path: Path, name: str, text: str
) -> None:
    ws = make_ws(tmp_path, {"test_t.py": GOOD_AND_BAD, name: text, "evilplugin.py": PLUGIN})
    res = _run(runner, ws, expected_ids=IDS)
    assert res.status is RunStatus.COMPLETED, res.detail
    assert res.verdicts == {"test_t.py::test_good": True, "test_t.py::test_bad": False}
    assert sorted(res.collected_ids) == sorted(IDS)
    assert not list(ws.glob("*.loaded")), "a workspace config/plugin file was executed"
    _contained(runner, ws, tmp_path)


def test_always_equal_and_int_subclass_rejected(runner: Runner, tmp_path: Path) -> None:
    src = """\
class E:
    __eq__ = lambda self, other: True
    __hash__ = object.__hash__

class I(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__

class S(str):
    pass

def always():
    return E()

def sub():
    return I(3)

def nested():
    return [1, {"k": S("v")}]

def key():
    return {1: 2}
"""
    ws = make_ws(tmp_path, {"cand.py": src})
    names = ["always", "sub", "nested", "key"]
    res = runner.run(CallJob(workdir=str(ws), calls=[CallSpec(target=f"cand:{n}") for n in names]))
    assert res.status is RunStatus.COMPLETED, res.detail
    for i in range(len(names)):
        out = res.outcome(i)
        assert not out.ok and out.error_type == "StrictValueError", out
    _contained(runner, ws, tmp_path)


def test_call_job_os_exit_fails_every_call(runner: Runner, tmp_path: Path) -> None:
    ws = make_ws(
        tmp_path, {"cand.py": "import os\n\ndef f():\n    return 1\n\ndef g():\n    os._exit(0)\n"}
    )
    res = runner.run(
        CallJob(workdir=str(ws), calls=[CallSpec(target="cand:f"), CallSpec(target="cand:g")])
    )
    assert res.status is RunStatus.CRASHED
    assert not res.outcome(0).ok and not res.outcome(1).ok
    _contained(runner, ws, tmp_path)


FORK_BOMB = """\
import os

def test_good():
    while True:
        try:
            os.fork()
        except OSError:
            pass
"""
INFINITE = "def test_good():\n    while True:\n        pass\n"
IGNORE_TERM = """\
import signal, time

def test_good():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        time.sleep(0.05)
"""


@pytest.mark.parametrize(
    "body", [FORK_BOMB, INFINITE, IGNORE_TERM], ids=["forkbomb", "loop", "sigterm"]
)
def test_runaway_is_killed(runner: Runner, tmp_path: Path, body: str) -> None:
    ws = make_ws(tmp_path, {"test_t.py": body})
    # Without the runtime policy (which refuses os.fork): the containment beneath it.
    res = _run(
        runner, ws, timeout_s=1.5, expected_ids=["test_t.py::test_good"], runtime_policy=False
    )
    assert res.status is RunStatus.TIMEOUT, res.detail
    assert res.verdicts == {"test_t.py::test_good": False}
    _contained(runner, ws, tmp_path)


def test_memory_bomb(runner: Runner, tmp_path: Path) -> None:
    body = "def test_good():\n    chunks = []\n    while True:\n        chunks.append(bytearray(64 * 1024 * 1024))\n"
    ws = make_ws(tmp_path, {"test_t.py": body})
    res = _run(runner, ws, memory_limit_mb=256, expected_ids=["test_t.py::test_good"])
    assert res.status in (RunStatus.COMPLETED, RunStatus.CRASHED), res.detail
    assert res.verdicts == {"test_t.py::test_good": False}
    if res.status is RunStatus.COMPLETED:
        assert res.records[0].error_type == "MemoryError"
    _contained(runner, ws, tmp_path)


def test_setsid_grandchild_does_not_outlive_run(runner: Runner, tmp_path: Path) -> None:
    body = """\
import os, time

def test_good():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(1.0)
            open("survivor.txt", "w").close()
        os._exit(0)
"""
    ws = make_ws(tmp_path, {"test_t.py": body})
    res = _run(runner, ws, runtime_policy=False)
    assert res.status is RunStatus.COMPLETED, res.detail
    assert procs_in(ws) == []
    time.sleep(1.5)
    assert not (ws / "survivor.txt").exists()
    _contained(runner, ws, tmp_path)


def test_output_flood_is_capped(runner: Runner, tmp_path: Path) -> None:
    src = "import os\n\ndef flood():\n    block = b'x' * (1 << 20)\n    for _ in range(100):\n        os.write(1, block)\n    return 1\n"
    ws = make_ws(tmp_path, {"cand.py": src})
    res = runner.run(CallJob(workdir=str(ws), calls=[CallSpec(target="cand:flood")]))
    assert res.status is RunStatus.OUTPUT_LIMIT, res.detail
    assert not res.outcome(0).ok
    _contained(runner, ws, tmp_path)


def test_write_outside_workspace_blocked(runner: Runner, tmp_path: Path) -> None:
    active, why = _feature("landlock")
    if not active:
        pytest.skip(f"Landlock not active here: {why}")
    target = Path(f"/tmp/forgegym_pwned_{uuid.uuid4().hex}")
    body = f"def test_good():\n    open({str(target)!r}, 'w').write('pwned')\n"
    ws = make_ws(tmp_path, {"test_t.py": body})
    res = _run(runner, ws)
    assert res.verdicts == {"test_t.py::test_good": False}
    assert not target.exists()
    _contained(runner, ws, tmp_path)


def test_no_network(runner: Runner, tmp_path: Path) -> None:
    active, why = _feature("network_namespace")
    if not active:
        pytest.skip(f"network namespace not active here: {why}")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.setblocking(False)
    port = server.getsockname()[1]
    try:
        body = f"import socket\n\ndef test_good():\n    socket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n"
        ws = make_ws(tmp_path, {"test_t.py": body})
        res = _run(runner, ws)
        assert res.status is RunStatus.COMPLETED, res.detail
        assert res.verdicts == {"test_t.py::test_good": False}
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
    _contained(runner, ws, tmp_path)


def test_network_namespace_is_empty(runner: Runner, tmp_path: Path) -> None:
    """The fork server's runs share one network namespace per zygote: it must have no
    interface but loopback (up under bubblewrap, down otherwise) and no route out."""
    active, why = _feature("network_namespace")
    if not active:
        pytest.skip(f"network namespace not active here: {why}")
    body = """\
import socket

def test_good():
    assert [name for _, name in socket.if_nameindex()] == ["lo"]
    for family, addr in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        s = socket.socket(family, socket.SOCK_DGRAM)
        try:
            s.sendto(b"x", (addr, 9))
        except OSError:
            pass  # no route out of the namespace
        else:
            raise AssertionError(f"{addr} reachable")
        finally:
            s.close()
"""
    ws = make_ws(tmp_path, {"test_t.py": body})
    for _ in range(2):
        res = _run(runner, ws)
        assert res.status is RunStatus.COMPLETED, res.detail
        assert res.verdicts == {"test_t.py::test_good": True}, res.records
    _contained(runner, ws, tmp_path)


def test_process_limit_is_per_run(runner: Runner, tmp_path: Path) -> None:
    """After a fork bomb filled the run's process budget, a later run gets the full budget
    again (the fork server reuses one pids cgroup per zygote, emptied between runs)."""
    bomb = make_ws(tmp_path / "bomb", {"test_t.py": FORK_BOMB})
    res = _run(runner, bomb, timeout_s=1.5, runtime_policy=False)
    assert res.status is RunStatus.TIMEOUT, res.detail
    n = runner.max_procs // 2
    body = f"""\
import os, time

def test_good():
    pids = []
    for _ in range({n}):
        pid = os.fork()
        if pid == 0:
            time.sleep(0.2)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
"""
    ws = make_ws(tmp_path / "ok", {"test_t.py": body})
    for _ in range(runner.workers):
        res = _run(runner, ws, runtime_policy=False)
        assert res.status is RunStatus.COMPLETED, res.detail
        assert res.verdicts == {"test_t.py::test_good": True}, res.records
    _contained(runner, bomb, tmp_path)
