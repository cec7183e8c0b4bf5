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

from forgegym.sandbox.jobs import PytestJob, RunStatus
from forgegym.sandbox.runners import ForkServerRunner, SubprocessRunner
from forgegym.sandbox.runners import forkserver as forkserver_mod
from forgegym.sandbox.runners import plain as plain_mod

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
    from forgegym.play.policies import NOOP_ACTION
    from forgegym.play.policies.registry import reference_action_for

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
