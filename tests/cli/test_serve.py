"""``forgegym serve`` as a process: it serves, and Ctrl-C closes every session and
releases its workspace."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_command_serves_and_shutdown_releases_workspaces(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "FORGEGYM_SCRATCH": str(tmp_path)}
    command = [sys.executable, "-m", "forgegym.cli", "serve", "Forge/Bugfix-v0"]
    proc = subprocess.Popen(
        [*command, "--port", str(port), "--max-sessions", "2", "--env-kwarg", "max_steps=3"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                health = httpx.get(url + "/health", timeout=5).json()
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    output = proc.stdout.read().decode() if proc.stdout else ""
                    pytest.fail(f"forgegym serve did not start:\n{output}")
                time.sleep(0.2)
        assert health["max_sessions"] == 2
        reset = httpx.post(url + "/reset", json={"seed": 1, "episode_id": "open"}, timeout=120)
        assert reset.json()["observation"]["info"]["max_steps"] == 3
        assert os.listdir(tmp_path)  # the open session's workspace
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert os.listdir(tmp_path) == []


def test_serve_command_rejects_an_unknown_id() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "forgegym.cli", "serve", "Forge/Nope-v0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "unknown ENV_ID 'Forge/Nope-v0'" in result.stderr
