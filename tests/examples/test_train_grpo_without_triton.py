"""GRPO on a CPU needs no triton: with ``import triton`` refused, the example trains
(forgegym's PyTorch LM head takes the place TRL's Triton kernel leaves empty), so the
``train`` extra can leave triton out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BLOCK_TRITON = """\
import sys


class _NoTriton:
    def find_spec(self, name, path=None, target=None):
        if name == "triton" or name.startswith("triton."):
            raise ImportError("triton refused for this test")
        return None


sys.meta_path.insert(0, _NoTriton())
"""


@pytest.mark.slow
def test_the_example_trains_on_cpu_without_triton(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("checks the CPU path")
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(BLOCK_TRITON)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env["OMP_NUM_THREADS"] = "1"
    probe = subprocess.run(
        [sys.executable, "-c", "import triton"], env=env, capture_output=True, text=True
    )
    assert probe.returncode != 0 and "refused" in probe.stderr
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "train_grpo.py"),
            "--backend",
            "trl",
            "--env",
            "Forge/Bugfix-v0",
            "--steps",
            "1",
            "--warm-start",
            "none",
            "--output-dir",
            str(tmp_path / "out"),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "trained 1 steps" in proc.stdout
    assert (tmp_path / "out" / "telemetry.jsonl").is_file()
