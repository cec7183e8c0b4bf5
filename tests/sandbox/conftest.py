"""Fixtures for the sandbox tests: one shared runner of each implementation."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from forgegym.sandbox.jobs import PytestJob, RunStatus
from forgegym.sandbox.runners import ForkServerRunner, Runner, SubprocessRunner

CANARY = "def test_ok():\n    assert 1 + 1 == 2\n"


@pytest.fixture(scope="session", params=["forkserver", "subprocess"])
def runner(request: pytest.FixtureRequest) -> Iterator[Runner]:
    """Both implementations; every security case runs against each."""
    impl: Runner = (
        ForkServerRunner(workers=2)
        if request.param == "forkserver"
        else SubprocessRunner(workers=2)
    )
    with impl:
        yield impl


def make_ws(root: Path, files: dict[str, str]) -> Path:
    """A workspace directory holding ``files``."""
    ws = root / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return ws


def procs_in(path: Path) -> list[int]:
    """Pids of live processes whose cwd is inside ``path`` (survivors of a run)."""
    prefix = str(path.resolve())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cwd.startswith(prefix) and state != "Z":
            found.append(int(entry))
    return found


def assert_healthy(runner: Runner, root: Path) -> None:
    """The next run on the same runner is normal."""
    ws = root / "canary"
    ws.mkdir(exist_ok=True)
    (ws / "test_canary.py").write_text(CANARY)
    result = runner.run(PytestJob(workdir=str(ws), targets=["test_canary.py"]))
    assert result.status is RunStatus.COMPLETED, result.detail
    assert result.verdicts == {"test_canary.py::test_ok": True}
