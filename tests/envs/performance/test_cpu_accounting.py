"""The parent's CPU measurement counts everything the candidate runs: work pushed into
a thread is counted, and a child process is refused by the runtime policy (and, beneath
it, counted too). Compares jobs with each other (ratios of CPU seconds, far from any
threshold), never against absolute times."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from forgegym.sandbox import CallJob, CallResult, CallSpec, ForkServerRunner, RunStatus

CANDIDATE = """
import os
import threading


def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total


def in_main(n):
    return spin(n)


def in_thread(n):
    box = []
    t = threading.Thread(target=lambda: box.append(spin(n)))
    t.start()
    t.join()
    return box[0]


def in_child(n):
    pid = os.fork()
    if pid == 0:
        spin(n)
        os._exit(0)
    os.waitpid(pid, 0)
    return 0


def nothing(n):
    return 0
"""

WORK = 4_000_000


@pytest.fixture(scope="module")
def runner() -> Iterator[ForkServerRunner]:
    pool = ForkServerRunner(workers=2)
    yield pool
    pool.close()


def _run(runner: ForkServerRunner, tmp_path: Path, fn: str, policy: bool = True) -> CallResult:
    directory = tmp_path / f"{fn}-{policy}"
    directory.mkdir()
    (directory / "cand.py").write_text(CANDIDATE)
    job = CallJob(
        workdir=str(directory),
        calls=[CallSpec(target=f"cand:{fn}", args=[WORK])],
        timeout_s=60,
        per_call_timeout_s=60,
        runtime_policy=policy,
    )
    result = runner.run(job)
    assert isinstance(result, CallResult)
    return result


def _cpu(runner: ForkServerRunner, tmp_path: Path, fn: str, policy: bool = True) -> float:
    result = _run(runner, tmp_path, fn, policy)
    assert result.status is RunStatus.COMPLETED, result
    assert result.outcome(0).ok, result.outcome(0)
    return result.cpu_s


def test_thread_and_child_process_work_is_counted(runner: ForkServerRunner, tmp_path: Path) -> None:
    idle = _cpu(runner, tmp_path, "nothing")
    main = _cpu(runner, tmp_path, "in_main")
    thread = _cpu(runner, tmp_path, "in_thread")
    # Beneath the runtime policy (switched off here only), a forked helper's CPU is in
    # the parent's rusage too: the supervisor reaps the whole tree.
    child = _cpu(runner, tmp_path, "in_child", policy=False)
    assert main > 3 * idle
    # The same work costs about the same wherever it runs (generous bounds: load).
    assert thread > 0.5 * main and child > 0.5 * main


def test_process_creation_is_refused_during_a_measured_run(
    runner: ForkServerRunner, tmp_path: Path
) -> None:
    result = _run(runner, tmp_path, "in_child")
    assert result.status is RunStatus.CRASHED and not result.outcome(0).ok
