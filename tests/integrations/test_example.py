"""examples/train_grpo.py: the unsloth backend refuses without a GPU; trl trains."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "examples" / "train_grpo.py"


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(_cuda(), reason="checks the no-GPU message")
def test_unsloth_backend_without_gpu_exits_with_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--backend", "unsloth"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "CUDA GPU" in lines[0] and "accelerator" in lines[0]


@pytest.mark.slow
def test_trl_backend_trains(tmp_path: Path) -> None:
    forgegym.register_envs()
    env_id = "Forge/Bugfix-v0"
    try:
        probe = gym.make(env_id)
        probe.unwrapped.task_bank.task_ids(1, seed=0)
        probe.close()
    except Exception:  # noqa: BLE001 - until the family serves tasks, use the toy family
        env_id = "toy_forge:ForgeTest/Toy-v0"
    state = tmp_path / "curriculum.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--backend",
            "trl",
            "--env",
            env_id,
            "--steps",
            "2",
            "--output-dir",
            str(tmp_path / "out"),
            "--curriculum-state",
            str(state),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={
            **os.environ,
            "TRITON_INTERPRET": "1",
            "PYTHONPATH": os.pathsep.join(
                [str(ROOT / "tests" / "curricula"), os.environ.get("PYTHONPATH", "")]
            ),
        },
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "trained 2 steps" in proc.stdout
    assert state.exists()
