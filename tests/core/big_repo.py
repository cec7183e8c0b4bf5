"""A synthetic repository too large to show whole within the default observation
budget: one ~30 KB module of 150 small functions with one bug in the middle, its
tests (one failing), and a hidden test file the agent must never see."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

from forgegym.core.task import Task, TaskList

BUG = "    return max(low, min(value, low))\n"
FIX = "    return max(low, min(value, high))\n"
FAILING = "tests/test_engine.py::test_clamp_caps_at_high"
HIDDEN_MARKER = "HIDDEN_MARKER_7F3A"
BIG = "calc/engine.py"


def _engine(body: str) -> str:
    parts = ['"""Small numeric helpers."""\n\n']
    for i in range(150):
        parts.append(
            f"def scaled_sum_{i:03}(values):\n"
            f'    """Return the sum of ``values``, each multiplied by {i}."""\n'
            f"    total = 0\n"
            f"    for value in values:\n"
            f"        total += value * {i}\n"
            f"    return total\n\n\n"
        )
        if i == 75:
            parts.append(
                "def clamp(value, low, high):\n"
                '    """``value`` limited to ``[low, high]``."""\n' + body + "\n\n"
            )
    return "".join(parts).rstrip("\n") + "\n"


def write_big_repo(root: Path) -> Path:
    """Write the repository under ``root`` and return its path."""
    (root / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "calc" / "__init__.py").write_text('"""calc."""\n')
    (root / BIG).write_text(_engine(BUG))
    (root / "tests" / "test_engine.py").write_text(
        "from calc.engine import clamp, scaled_sum_003\n\n\n"
        "def test_scaled_sum():\n    assert scaled_sum_003([1, 2]) == 9\n\n\n"
        "def test_clamp_keeps_low():\n    assert clamp(-5, 0, 10) == 0\n\n\n"
        "def test_clamp_caps_at_high():\n    assert clamp(50, 0, 10) == 10\n"
    )
    (root / "tests" / "test_hidden.py").write_text(
        f"{HIDDEN_MARKER} = 1\n\nfrom calc.engine import clamp\n\n\n"
        "def test_clamp_inside():\n    assert clamp(5, 0, 10) == 5\n"
    )
    return root


def big_repo_task(root: Path) -> Task:
    """The repository as a Bugfix repository task, with the fix as its reference (the
    ``reference``/``navigate`` policies know the fix, as they do for built-in tasks)."""
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(write_big_repo(root)),
        failing_tests=[FAILING],
        hidden_tests=["tests/test_hidden.py"],
    )
    try:
        task = env.unwrapped.task_bank.get(env.unwrapped.task_bank.ids()[0])
    finally:
        env.close()
    fixed = task.files[BIG].replace(BUG, FIX)
    return task.model_copy(update={"reference": {BIG: fixed}})


def big_repo_bank(root: Path) -> TaskList:
    return TaskList([big_repo_task(root)])
