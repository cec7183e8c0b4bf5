"""Your own code as Bugfix tasks: a repository, its failing tests, optional hidden tests.

Run it (it writes two small repositories into a temporary directory)::

    python examples/own_bugfix_task.py

It shows the two ways in:

1. one task, straight from ``gym.make``: ``repo_path`` + ``failing_tests`` (+
   ``hidden_tests``, test files the agent never sees);
2. several tasks, built with :func:`forgegym.envs.bugfix.repo.repo_task` and served
   from a typed :class:`forgegym.core.task.TaskList` (``task_bank=``), which works with
   every generic tool: datasets, reward functions, curricula, vector envs.

and grades a real fix, the no-op and a test-weakening edit on each.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import gymnasium as gym

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.task import TaskList
from forgegym.envs.bugfix.repo import repo_task

MODULE = '''\
def mean(values):
    """The arithmetic mean of a non-empty list."""
    return sum(values) / (len(values) + 1)
'''
TESTS = """\
from stats import mean


def test_mean_of_two():
    assert mean([1, 2]) == 1.5


def test_mean_of_equal_values():
    assert mean([0, 0]) == 0
"""
HIDDEN = """\
from stats import mean


def test_mean_of_three():
    assert mean([2, 4, 9]) == 5
"""


def write_repo(root: Path, module: str = MODULE) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "stats.py").write_text(module)
    (root / "tests" / "test_stats.py").write_text(TESTS)
    (root / "tests" / "test_hidden.py").write_text(HIDDEN)
    return root


def edit(path: str, search: str, replace: str) -> str:
    action = {"action": "edit", "edits": [{"path": path, "search": search, "replace": replace}]}
    return json.dumps([action, {"action": "submit"}])


FIX = edit("stats.py", "sum(values) / (len(values) + 1)", "sum(values) / len(values)")
OTHER_FIX = edit("stats.py", "max(values) / (len(values) + 1)", "sum(values) / len(values)")


def play(env: gym.Env, fix: str, task_id: str | None = None) -> None:
    attempts = {
        "fix": fix,
        "no-op": '{"action": "submit"}',
        "weaken the test": edit("tests/test_stats.py", "assert mean([1, 2]) == 1.5", "pass"),
    }
    for label, action in attempts.items():
        env.reset(seed=0, options={"task_id": task_id} if task_id else None)
        _, reward, _, _, info = env.step(action)
        print(
            f"  {label:16s} reward {reward:+.3f}  score {info['score']:.2f}  "
            f"success {info['success']}"
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = write_repo(Path(tmp) / "stats_repo")

        print("1. gym.make(repo_path=..., failing_tests=..., hidden_tests=...)")
        env = gym.make(
            "Forge/Bugfix-v0",
            repo_path=str(repo),
            failing_tests=["tests/test_stats.py::test_mean_of_two"],
            hidden_tests=["tests/test_hidden.py"],
            max_steps=1,
        )
        try:
            play(env, FIX)
        finally:
            env.close()

        print("2. a TaskList of several repository tasks")
        other = write_repo(Path(tmp) / "other_repo", MODULE.replace("sum(values)", "max(values)"))
        tasks = [
            repo_task(repo, ["tests/test_stats.py::test_mean_of_two"]),
            repo_task(other, ["tests/test_stats.py::test_mean_of_two"], title="mean is wrong"),
        ]
        env = gym.make("Forge/Bugfix-v0", task_bank=TaskList(tasks), max_steps=1)
        try:
            for task, fix in zip(tasks, (FIX, OTHER_FIX), strict=True):
                print(f"  task {task.task_id} ({task.title})")
                play(env, fix, task.task_id)
        finally:
            env.close()


if __name__ == "__main__":
    main()
