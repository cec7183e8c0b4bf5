"""Functional behaviour of both runners: verdicts, ids, order, hooks, env, calls."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path

from forgegym.sandbox.jobs import (
    CallJob,
    CallSpec,
    PytestJob,
    RunStatus,
    SetupHook,
    TestOutcome,
)
from forgegym.sandbox.runners import Runner, get_default_runner

from .conftest import CANARY, make_ws

MIXED = """\
import pytest

def test_pass():
    assert True

def test_fail():
    assert 1 == 2

@pytest.fixture
def broken():
    raise RuntimeError("setup boom")

def test_error(broken):
    pass

def test_skip():
    pytest.skip("not today")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.mark.xfail(reason="lucky")
def test_xpass():
    pass
"""


def test_mixed_verdicts(runner: Runner, tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"test_mixed.py": MIXED})
    res = runner.run(PytestJob(workdir=str(ws), targets=["test_mixed.py"]))
    assert res.status is RunStatus.COMPLETED, res.detail
    outcomes = {r.nodeid.split("::")[1]: r.outcome for r in res.records}
    assert outcomes == {
        "test_pass": TestOutcome.PASSED,
        "test_fail": TestOutcome.FAILED,
        "test_error": TestOutcome.ERROR,
        "test_skip": TestOutcome.SKIPPED,
        "test_xfail": TestOutcome.XFAILED,
        "test_xpass": TestOutcome.XPASSED,
    }
    verdicts = res.verdicts
    assert verdicts["test_mixed.py::test_pass"] is True
    assert sum(verdicts.values()) == 1  # skip/xfail/xpass are not passes
    fail = next(r for r in res.records if r.nodeid.endswith("test_fail"))
    assert fail.error_type == "AssertionError"
    assert fail.frames and fail.frames[-1].path == "test_mixed.py"
    assert fail.frames[-1].function == "test_fail"
    err = next(r for r in res.records if r.nodeid.endswith("test_error"))
    assert err.error_type == "RuntimeError" and "setup boom" in err.message
    assert res.cpu_s > 0 and res.max_rss_kb > 0


SUBTESTS = """\
import unittest

class TestParts(unittest.TestCase):
    def test_one_part_fails(self):
        for n in (1, 2, 3):
            with self.subTest(n=n):
                self.assertLess(n, 3)

    def test_every_part_passes(self):
        for n in (1, 2):
            with self.subTest(n=n):
                self.assertLess(n, 3)
"""


def test_a_failing_subtest_fails_its_test(runner: Runner, tmp_path: Path) -> None:
    # pytest reports the failing subTest, then the test's own (passing) call: the test
    # must still fail, as a plain pytest run says.
    ws = make_ws(tmp_path, {"test_parts.py": SUBTESTS})
    res = runner.run(PytestJob(workdir=str(ws), targets=["test_parts.py"]))
    assert res.status is RunStatus.COMPLETED, res.detail
    assert res.verdicts == {
        "test_parts.py::TestParts::test_one_part_fails": False,
        "test_parts.py::TestParts::test_every_part_passes": True,
    }


MOCK_OPEN = """\
from unittest import mock


def test_reads_through_mock_open():
    with mock.patch("builtins.open", mock.mock_open(read_data="a\\nb\\n")):
        with open("any.txt") as handle:
            assert handle.read() == "a\\nb\\n"


def test_after_it():
    assert True
"""


def test_mock_open_is_not_tampering(runner: Runner, tmp_path: Path) -> None:
    # mock_open binds unittest.mock's ``file_spec`` on its first call (pyparsing's suite
    # ended there: "trusted state tampered with"); the harness binds it before the snapshot.
    ws = make_ws(tmp_path, {"test_mocked.py": MOCK_OPEN})
    res = runner.run(PytestJob(workdir=str(ws), targets=["test_mocked.py"]))
    assert res.status is RunStatus.COMPLETED, res.detail
    assert res.verdicts == {
        "test_mocked.py::test_reads_through_mock_open": True,
        "test_mocked.py::test_after_it": True,
    }


def test_expected_ids_mismatch(runner: Runner, tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"test_a.py": CANARY})
    res = runner.run(
        PytestJob(
            workdir=str(ws),
            targets=["test_a.py"],
            expected_ids=["test_a.py::test_ok", "test_a.py::test_hidden"],
        )
    )
    assert res.status is RunStatus.ID_MISMATCH
    assert res.verdicts == {"test_a.py::test_ok": False, "test_a.py::test_hidden": False}


def test_order_with_repeats(runner: Runner, tmp_path: Path) -> None:
    src = """\
calls = []

def test_a():
    calls.append("a")

def test_b():
    assert calls == ["a", "a"]

def test_c():
    raise AssertionError("not run")
"""
    ws = make_ws(tmp_path, {"test_o.py": src})
    order = ["test_o.py::test_a", "test_o.py::test_a", "test_o.py::test_b"]
    res = runner.run(PytestJob(workdir=str(ws), targets=["test_o.py"], order=order))
    assert res.status is RunStatus.COMPLETED, res.detail
    assert [r.nodeid for r in res.records] == order
    assert all(r.outcome is TestOutcome.PASSED for r in res.records)
    assert res.verdicts["test_o.py::test_c"] is False  # collected but not ordered: not run


def test_setup_hook_env_tz_and_hash_seed(runner: Runner, tmp_path: Path) -> None:
    random.seed(123)
    expected_random = random.random()
    expected_hash = subprocess.run(
        [sys.executable, "-c", "print(hash('forgegym'))"],
        env={"PYTHONHASHSEED": "7"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    src = f"""\
import os, random, time

def test_hook():
    assert random.random() == {expected_random!r}

def test_env():
    assert os.environ["FORGE_X"] == "1"
    assert time.localtime(0).tm_hour == 9  # Asia/Tokyo is UTC+9

def test_hash_seed():
    assert str(hash("forgegym")) == {expected_hash!r}
"""
    ws = make_ws(tmp_path, {"test_h.py": src})
    res = runner.run(
        PytestJob(
            workdir=str(ws),
            targets=["test_h.py"],
            env={"FORGE_X": "1", "TZ": "Asia/Tokyo"},
            python_hash_seed=7,
            setup_hooks=[
                SetupHook(target="forgegym.sandbox.hooks:seed_random", kwargs={"seed": 123})
            ],
        )
    )
    assert res.status is RunStatus.COMPLETED, res.detail
    assert res.all_passed, [(r.nodeid, r.message) for r in res.records]


def test_untrusted_setup_hook_rejected(runner: Runner, tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"test_a.py": CANARY})
    res = runner.run(
        PytestJob(
            workdir=str(ws), targets=["test_a.py"], setup_hooks=[SetupHook(target="os:getcwd")]
        )
    )
    assert res.status is RunStatus.INTERNAL_ERROR
    assert not res.all_passed


def test_call_job_values_and_errors(runner: Runner, tmp_path: Path) -> None:
    src = """\
import time

def add(a, b):
    return a + b

def shapes():
    return {"t": (1, 2), "n": None, "f": float("nan"), "i": float("-inf"), "s": "x"}

def boom():
    raise ValueError("bad input")

def slow():
    while True:
        time.sleep(0.01)
"""
    ws = make_ws(tmp_path, {"cand.py": src})
    res = runner.run(
        CallJob(
            workdir=str(ws),
            calls=[
                CallSpec(target="cand:add", args=[2, 3]),
                CallSpec(target="cand:shapes"),
                CallSpec(target="cand:boom"),
                CallSpec(target="cand:slow"),
                CallSpec(target="cand:missing"),
                CallSpec(target="cand:add", kwargs={"a": "x", "b": "y"}),
            ],
            per_call_timeout_s=0.3,
        )
    )
    assert res.status is RunStatus.COMPLETED, res.detail
    assert res.outcome(0).ok and res.outcome(0).value == 5
    shapes = res.outcome(1).value
    assert shapes["t"] == [1, 2] and shapes["n"] is None and math.isnan(shapes["f"])
    assert shapes["i"] == float("-inf")
    assert res.outcome(2).error_type == "ValueError" and "bad input" in res.outcome(2).message
    assert not res.outcome(3).ok and res.outcome(3).error_type == "TimeoutError"
    assert res.outcome(4).error_type == "AttributeError"
    assert res.outcome(5).value == "xy"


def test_run_many_keeps_input_order(runner: Runner, tmp_path: Path) -> None:
    jobs = []
    for i in range(5):
        ws = make_ws(
            tmp_path / f"j{i}", {f"test_n{i}.py": f"def test_v():\n    assert {i} % 2 == 0\n"}
        )
        jobs.append(PytestJob(workdir=str(ws), targets=[f"test_n{i}.py"]))
    results = runner.run_many(jobs)
    assert [r.all_passed for r in results] == [True, False, True, False, True]
    assert [r.collected_ids for r in results] == [[f"test_n{i}.py::test_v"] for i in range(5)]


def test_default_runner_is_not_shared_across_fork(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"test_a.py": CANARY})
    parent_runner = get_default_runner()
    assert get_default_runner() is parent_runner
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            child_runner = get_default_runner()
            res = child_runner.run(PytestJob(workdir=str(ws), targets=["test_a.py"]))
            ok = child_runner is not parent_runner and res.all_passed
            os.write(w, b"ok" if ok else res.detail.encode()[:200] or b"fail")
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read()
    os.waitpid(pid, 0)
    assert msg == b"ok"
    assert parent_runner.run(PytestJob(workdir=str(ws), targets=["test_a.py"])).all_passed


LEAKER = """\
import _pytest.config


def test_leak(pytestconfig):
    pytestconfig.leaked_attr = True
    pytestconfig.option.leaked = True
    pytestconfig.pluginmanager.register(object(), "leaked_plugin")
    _pytest.config.LEAKED_GLOBAL = True
"""
CHECKER = """\
from pathlib import Path

import _pytest.config


def test_fresh(pytestconfig):
    assert not hasattr(pytestconfig, "leaked_attr")
    assert not hasattr(pytestconfig.option, "leaked")
    assert pytestconfig.pluginmanager.get_plugin("leaked_plugin") is None
    assert not hasattr(_pytest.config, "LEAKED_GLOBAL")
    assert pytestconfig.invocation_params.dir == Path.cwd()
    assert "test_check.py" in pytestconfig.invocation_params.args
    assert pytestconfig.rootpath == Path.cwd()
    assert pytestconfig.pluginmanager.is_blocked("cacheprovider")
"""


def test_pytest_state_is_fresh_every_run(runner: Runner, tmp_path: Path) -> None:
    """The fork server reuses warm pytest state (imports, a prebuilt config): a run that
    mutates it must not affect the next run, and the invocation parameters are the run's."""
    leak = make_ws(tmp_path / "a", {"test_leak.py": LEAKER})
    check = make_ws(tmp_path / "b", {"test_check.py": CHECKER})
    for _ in range(2 * runner.workers):
        first = runner.run(PytestJob(workdir=str(leak), targets=["test_leak.py"]))
        # A test that registers a plugin could rewrite verdicts: the run reads as tampered.
        assert first.status is RunStatus.CRASHED, first.detail
        assert "leaked_plugin" in first.detail
        second = runner.run(PytestJob(workdir=str(check), targets=["test_check.py"]))
        assert second.status is RunStatus.COMPLETED, second.detail
        assert second.all_passed, [r.message for r in second.records]
