"""Make the toy family of tests/curricula importable here too."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "curricula"))

import os  # noqa: E402

# TRL's fused LM head uses Triton kernels; on a CPU they only run interpreted, and the
# variable must be set before trl is imported (see DESIGN.md, Trainer integration).
os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

# TRL's fused LM head is a Triton kernel that only runs interpreted on a CPU (>100x
# slower); the plain-PyTorch equivalent is checked against it in test_cpu_kernels.py.
from forgegym.integrations.cpu_kernels import install_cpu_lm_head  # noqa: E402

install_cpu_lm_head()


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Torch on one thread: the suite shares 2 cores with sandbox workers, and OpenMP
    spin-waiting under oversubscription slows a tiny model down by over 10x."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
