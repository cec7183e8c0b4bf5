"""Reward validity under machine faults (issue #29): faults of the grading machinery are
retried once, then reported as invalid rewards with their cause, never scored as the
code's failure; the pool recovers by itself."""

from __future__ import annotations

import errno
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from forgegym.sandbox.jobs import PytestJob, PytestResult, RunStatus
from forgegym.sandbox.runners import ForkServerRunner, SubprocessRunner
from forgegym.sandbox.runners import forkserver as forkserver_mod
from forgegym.sandbox.runners import plain as plain_mod
from forgegym.sandbox.runners.base import FAULT_ZYGOTE, WALL_TIMEOUT, OverloadCheck, host_load

SLOW_PASS = "import time\n\ndef test_ok():\n    time.sleep(1.5)\n    assert True\n"
QUICK_PASS = "def test_ok():\n    assert 1 + 1 == 2\n"


def _job(tmp_path: Path, text: str, name: str = "ws") -> PytestJob:
    ws = tmp_path / name
    ws.mkdir()
    (ws / "test_a.py").write_text(text)
    return PytestJob(workdir=str(ws), targets=["test_a.py"], timeout_s=20)


def test_zygote_killed_mid_run_is_retried_and_scored_normally(tmp_path: Path) -> None:
    """The machine kills the zygote under a passing run: the runner retries on a fresh
    zygote and the job gets its true verdict (on the old code: CRASHED, the code's)."""
    with ForkServerRunner(workers=1) as runner:
        made: list[Any] = []
        original = runner._new_zygote

        def recording(seed: int | None) -> Any:
            zygote = original(seed)
            made.append(zygote)
            return zygote

        runner._new_zygote = recording  # type: ignore[method-assign]

        def kill_first() -> None:
            deadline = time.monotonic() + 10
            while not made and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.6)  # the test is sleeping inside the worker by now
            os.killpg(made[0].proc.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_first)
        killer.start()
        result = runner.run(_job(tmp_path, SLOW_PASS))
        killer.join()
        assert result.fault is None, result
        assert result.status is RunStatus.COMPLETED and result.all_passed, result.detail
        assert len(made) == 2  # the dead zygote was replaced, not reused
        after = runner.run(_job(tmp_path, QUICK_PASS, "next"))
        assert after.status is RunStatus.COMPLETED and after.all_passed


@pytest.mark.parametrize(
    ("code", "where"),
    [
        (errno.ENOSPC, "snapshot"),  # the job tmpfs / scratch disk full on the parent's side
        (errno.EAGAIN, "popen"),  # the pids limit exhausted from the parent's side
    ],
)
def test_parent_side_setup_fault_is_invalid_with_its_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, where: str
) -> None:
    """Persistent (both attempts) parent-side ENOSPC/EAGAIN: INTERNAL_ERROR with a
    ``setup`` fault naming the error; once the machine recovers, the next run is normal."""
    failures = {"n": 0}

    def broken(*args: Any, **kwargs: Any) -> Any:
        failures["n"] += 1
        raise OSError(code, os.strerror(code))

    runner: Any = ForkServerRunner(workers=1) if where == "snapshot" else SubprocessRunner(1)
    with runner:
        if where == "snapshot":
            monkeypatch.setattr(forkserver_mod, "snapshot", broken)
        else:
            monkeypatch.setattr(plain_mod.subprocess, "Popen", broken)
        result = runner.run(_job(tmp_path, QUICK_PASS))
        assert failures["n"] == 2  # retried once
        assert result.status is RunStatus.INTERNAL_ERROR
        assert result.fault is not None and result.fault.startswith("setup:")
        assert os.strerror(code) in result.fault
        monkeypatch.undo()
        after = runner.run(_job(tmp_path, QUICK_PASS, "next"))
        assert after.fault is None and after.all_passed


def test_machine_fault_gives_invalid_reward_none_in_trl_and_recovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: a batch graded while the parent cannot set jobs up gets
    ``reward_valid`` False with the cause in the breakdown, None from the TRL reward
    function and ``forgegym/reward_invalid`` 1; the next batch grades normally."""
    from forgegym.integrations.trl import make_reward_funcs
    from forgegym.policies import NOOP_ACTION
    from forgegym.policies.registry import reference_action_for

    with ForkServerRunner(workers=1) as runner:
        env_kwargs = {"max_steps": 1, "runner": runner}
        (reward,) = make_reward_funcs("Forge/Bugfix-v0", env_kwargs=env_kwargs)
        import gymnasium as gym

        env = gym.make("Forge/Bugfix-v0", **env_kwargs).unwrapped
        task = env.task_bank.get(env.task_bank.task_ids(1, seed=3)[0])
        env.close()
        ref = reference_action_for("bugfix")(task)
        completions = [ref, NOOP_ACTION]

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(forkserver_mod, "snapshot", broken)
        logged: dict[str, float] = {}
        values = reward(
            prompts=[[]] * 2,
            completions=completions,
            task_id=[task.task_id] * 2,
            log_metric=logged.__setitem__,
        )
        assert values == [None, None]
        assert logged["forgegym/reward_invalid"] == 1.0
        assert logged["forgegym/gate/machine_fault"] == 1.0
        monkeypatch.undo()
        logged.clear()
        values = reward(
            prompts=[[]] * 2,
            completions=completions,
            task_id=[task.task_id] * 2,
            log_metric=logged.__setitem__,
        )
        assert None not in values and values[0] > values[1]
        assert logged["forgegym/reward_invalid"] == 0.0
        reward.close()  # type: ignore[attr-defined]


SLEEPS = "import time\n\ndef test_ok():\n    time.sleep(60)\n"
LOOPS = "def test_ok():\n    while True:\n        pass\n"
SLOWISH_PASS = "import time\n\ndef test_ok():\n    time.sleep(1.0)\n    assert True\n"


def _counting(runner: Any) -> list[float]:
    """Record each attempt's time-out (``Runner._attempt`` calls)."""
    attempts: list[float] = []
    original = runner._attempt

    def attempt(job: PytestJob) -> Any:
        attempts.append(job.timeout_s)
        return original(job)

    runner._attempt = attempt
    return attempts


@pytest.mark.parametrize("text", [SLEEPS, LOOPS], ids=["sleeps", "loops"])
def test_own_timeout_under_overload_stays_the_codes_after_one_retry(
    tmp_path: Path, text: str
) -> None:
    """A program that sleeps or loops, on a host the check sees as overloaded (and with
    its CPU share counted as starved, so a busy loop qualifies too): retried once, then
    its time-out is the code's, never a fault (no laundering into an invalid reward)."""
    with ForkServerRunner(workers=1) as runner:
        runner.overload = OverloadCheck(threshold=1.0, cpu_share=2.0, load=lambda: 8.0)
        attempts = _counting(runner)
        job = _job(tmp_path, text).model_copy(update={"timeout_s": 1.0})
        result = runner.run(job)
        assert len(attempts) == 2
        assert result.status is RunStatus.TIMEOUT and result.fault is None, result
        assert "also on retry: the code's" in result.detail


def test_timeout_caused_by_overload_gets_the_retrys_true_verdict(tmp_path: Path) -> None:
    """The first attempt is starved (simulated: it gets a fraction of its time and its
    CPU share counts as starved, as on a host that did not schedule it) and times out on
    an overloaded host; the retry runs normally and its verdict (passed) is the job's."""
    with ForkServerRunner(workers=1) as runner:
        runner.overload = OverloadCheck(threshold=1.0, cpu_share=2.0, load=lambda: 8.0)
        attempts: list[float] = []
        original = runner._attempt

        def starved_first(job: PytestJob) -> Any:
            attempts.append(job.timeout_s)
            if len(attempts) == 1:  # the machine gave this run 0.3 s of its 20 s
                return original(job.model_copy(update={"timeout_s": 0.3}))
            return original(job)

        runner._attempt = starved_first  # type: ignore[method-assign]
        result = runner.run(_job(tmp_path, SLOWISH_PASS))
        assert len(attempts) == 2
        assert result.fault is None and result.status is RunStatus.COMPLETED, result
        assert result.all_passed


def test_starved_timeout_then_a_code_reachable_fault_stays_the_timeout(tmp_path: Path) -> None:
    """A starved time-out whose retry ends in a fault the code can cause (its zygote died):
    the time-out stands (the code's), so a program cannot swap its time-out for an
    invalid reward by killing its zygote on the retry."""
    with ForkServerRunner(workers=1) as runner:
        runner.overload = OverloadCheck(threshold=1.0, cpu_share=2.0, load=lambda: 8.0)
        attempts: list[float] = []
        original = runner._attempt

        def zygote_dies_on_retry(job: PytestJob) -> Any:
            attempts.append(job.timeout_s)
            if len(attempts) == 2:
                return PytestResult(
                    status=RunStatus.CRASHED, fault=f"{FAULT_ZYGOTE}: zygote died: EOF"
                )
            return original(job)

        runner._attempt = zygote_dies_on_retry  # type: ignore[method-assign]
        result = runner.run(_job(tmp_path, SLEEPS).model_copy(update={"timeout_s": 1.0}))
        assert len(attempts) == 2
        assert result.status is RunStatus.TIMEOUT and result.fault is None, result


@pytest.mark.parametrize(
    ("load", "cpu_share"),
    [(0.2, 2.0), (8.0, 0.0)],  # host not overloaded; the worker used its CPU
    ids=["no-overload", "used-its-cpu"],
)
def test_timeout_without_overload_or_starvation_is_not_retried(
    tmp_path: Path, load: float, cpu_share: float
) -> None:
    with ForkServerRunner(workers=1) as runner:
        runner.overload = OverloadCheck(threshold=1.0, cpu_share=cpu_share, load=lambda: load)
        attempts = _counting(runner)
        result = runner.run(_job(tmp_path, SLEEPS).model_copy(update={"timeout_s": 1.0}))
        assert len(attempts) == 1
        assert result.status is RunStatus.TIMEOUT and result.fault is None
        assert "retry" not in result.detail


def test_overload_check_rules() -> None:
    """Only a wall time-out with little CPU on an overloaded host qualifies; the load is
    taken at the start or the end of the run."""
    check = OverloadCheck(threshold=1.5, cpu_share=0.5, load=lambda: 1.0)
    wall = PytestResult(
        status=RunStatus.TIMEOUT, detail=f"{WALL_TIMEOUT} 5s exceeded", wall_s=5.0, cpu_s=0.1
    )
    assert check.starved(wall, load_before=2.0)  # overloaded when it started
    assert not check.starved(wall, load_before=1.0)  # never overloaded
    assert not check.starved(wall.model_copy(update={"cpu_s": 3.0}), load_before=2.0)
    cpu_limit = wall.model_copy(update={"detail": "CPU time limit 6s exceeded"})
    assert not check.starved(cpu_limit, load_before=2.0)
    crashed = wall.model_copy(update={"status": RunStatus.CRASHED})
    assert not check.starved(crashed, load_before=2.0)
    expected = os.getloadavg()[0] / len(os.sched_getaffinity(0))
    assert host_load() == pytest.approx(expected, abs=1.0)  # the load average moves slowly
