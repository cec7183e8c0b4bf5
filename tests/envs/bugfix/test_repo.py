"""Your own code as a Bugfix task: ``repo_path`` + ``failing_tests`` (+ ``hidden_tests``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.task import TaskList
from forgegym.envs.bugfix.repo import RepoHidden, repo_task
from forgegym.policies import NOOP_ACTION

MODULE = '''\
def mean(values):
    """The arithmetic mean of a non-empty list."""
    return sum(values) / (len(values) + 1)


def clamp(value, low, high):
    return max(low, min(value, high))
'''
TESTS = """\
from stats import clamp, mean


def test_mean_of_two():
    assert mean([1, 2]) == 1.5


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
"""
HIDDEN = """\
from stats import clamp, mean


def test_clamp_inside():
    assert clamp(2, 0, 3) == 2


def test_mean_of_three():
    assert mean([2, 4, 9]) == 5


def test_mean_of_one():
    assert mean([7]) == 7
"""
FAILING = "tests/test_stats.py::test_mean_of_two"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "stats.py").write_text(MODULE)
    (tmp_path / "tests" / "test_stats.py").write_text(TESTS)
    (tmp_path / "tests" / "test_hidden_stats.py").write_text(HIDDEN)
    (tmp_path / "tests" / "helpers.py").write_text("def close(a, b):\n    return a == b\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "hook.py").write_text("raise SystemExit\n")  # skipped
    return tmp_path


def _edit(path: str, search: str, replace: str) -> str:
    edit = {"action": "edit", "edits": [{"path": path, "search": search, "replace": replace}]}
    return "```json\n" + json.dumps([edit, {"action": "submit"}]) + "\n```"


FIX = _edit("stats.py", "(len(values) + 1)", "len(values)")
DELETE_ASSERTION = _edit("tests/test_stats.py", "    assert mean([1, 2]) == 1.5\n", "    pass\n")
SPECIAL_CASE = _edit(
    "stats.py",
    "    return sum(values)",
    "    if values == [1, 2]:\n        return 1.5\n    return sum(values)",
)


def _episode(env: Any, action: str) -> tuple[float, dict[str, Any], str]:
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(action)
    assert terminated or truncated
    return reward, info, observation


def test_reference_fix_succeeds_noop_and_test_edit_do_not(repo: Path) -> None:
    env = gym.make("Forge/Bugfix-v0", repo_path=str(repo), failing_tests=[FAILING], max_steps=1)
    try:
        observation, info = env.reset(seed=0)
        assert info["editable_files"] == ["stats.py"]
        assert info["visible_test_files"] == ["tests/test_hidden_stats.py", "tests/test_stats.py"]
        assert "test_mean_of_two" in observation and "FAILED" in observation
        assert ".git" not in observation

        fix, fixed, _ = _episode(env, FIX)
        assert fixed["success"] and fixed["score"] > 0.9, fixed["reward_breakdown"]
        noop, nothing, _ = _episode(env, NOOP_ACTION)
        assert not nothing["success"] and noop < 0 < fix

        # Tests are read-only: deleting the assertion is refused, and scores as the no-op.
        weakened, info, observation = _episode(env, DELETE_ASSERTION)
        assert "not editable" in observation or "read-only" in observation, observation[-2000:]
        assert not info["success"] and weakened == pytest.approx(noop)
        # Even written into the submission directly, a test edit never reaches grading.
        graded = env.unwrapped.grade_completions(
            info["task_id"],
            [
                json.dumps(
                    {
                        "action": "edit",
                        "edits": [
                            {"path": "tests/test_stats.py", "content": "def test_x(): pass\n"}
                        ],
                    }
                )
            ],
        )
        assert not env.unwrapped.solved(graded[0][1]) and graded[0][0] <= noop + 1e-9
    finally:
        env.close()


def test_hidden_tests_catch_special_casing_and_stay_hidden(repo: Path) -> None:
    hidden = ["tests/test_hidden_stats.py"]
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(repo),
        failing_tests=[FAILING],
        hidden_tests=hidden,
        max_steps=1,
    )
    try:
        observation, info = env.reset(seed=0)
        assert "test_mean_of_three" not in observation
        assert info["visible_test_files"] == ["tests/test_stats.py"]
        task = env.unwrapped.task
        data = RepoHidden.model_validate(task.hidden)
        assert data.hidden_failing == [
            "tests/test_hidden_stats.py::test_mean_of_one",
            "tests/test_hidden_stats.py::test_mean_of_three",
        ]
        assert data.passing_tests == ["tests/test_stats.py::test_clamp"]
        assert "tests/test_hidden_stats.py::test_clamp_inside" in data.hidden_ids
        assert not (Path(env.unwrapped.workspace.root) / hidden[0]).exists()

        _, fixed, _ = _episode(env, FIX)
        assert fixed["success"]
        special, info, _ = _episode(env, SPECIAL_CASE)
        assert not info["success"]
        noop, _, _ = _episode(env, NOOP_ACTION)
        assert special <= noop + 1e-9, info["reward_breakdown"]
    finally:
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"repo_path": "/no/such/dir", "failing_tests": [FAILING]}, "repo_path"),
        ({"failing_tests": [FAILING]}, "repo_path"),
        ({"repo_path": "."}, "failing_tests"),
        ({"failing_tests": FAILING}, "failing_tests"),
        ({"failing_tests": []}, "failing_tests"),
        ({"failing_tests": ["tests/test_stats.py"]}, "failing_tests"),
        ({"failing_tests": ["tests/test_stats.py::test_nope"]}, "failing_tests"),
        ({"failing_tests": ["tests/test_stats.py::test_clamp"]}, "failing_tests"),  # passes
        ({"failing_tests": ["stats.py::mean"]}, "failing_tests"),
        ({"failing_tests": [FAILING], "hidden_tests": ["nope.py"]}, "hidden_tests"),
        ({"failing_tests": [FAILING], "hidden_tests": ["../x/test_a.py"]}, "hidden_tests"),
        ({"failing_tests": [FAILING], "editable_files": ["tests/helpers.py"]}, "editable_files"),
        ({"failing_tests": [FAILING], "editable_files": "stats.py"}, "editable_files"),
        ({"editable_files": ["stats.py"]}, "repo_path"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(
    repo: Path, kwargs: dict[str, Any], name: str
) -> None:
    kwargs = dict(kwargs)
    if kwargs.get("repo_path") == "." or ("repo_path" not in kwargs and name != "repo_path"):
        kwargs["repo_path"] = str(repo)
    with pytest.raises(ValueError, match=name):
        gym.make("Forge/Bugfix-v0", **kwargs)


def test_a_task_list_serves_several_repository_tasks(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "stats.py").write_text(MODULE.replace("min(value, high)", "min(value, low)"))
    (other / "test_clamp.py").write_text(TESTS)
    tasks = [
        repo_task(repo, [FAILING]),
        repo_task(other, ["test_clamp.py::test_clamp", "test_clamp.py::test_mean_of_two"]),
    ]
    bank = TaskList(tasks)
    assert bank.task_ids(5) and sorted(bank.task_ids(5)) == sorted(t.task_id for t in tasks)
    env = gym.make("Forge/Bugfix-v0", task_bank=bank, max_steps=1)
    try:
        _, info = env.reset(options={"task_id": tasks[1].task_id})
        assert info["task_id"] == tasks[1].task_id
        _, reward, *_, info = env.step(_edit("stats.py", "min(value, low)", "min(value, high)"))
        assert not info["success"]  # one of its two failing tests still fails
        assert info["reward_breakdown"]["terms"]["hidden"]["value"] == pytest.approx(0.5)
    finally:
        env.close()
    with pytest.raises(ValueError, match="tasks"):
        TaskList([tasks[0], tasks[0]])


def test_task_list_is_a_task_bank_with_seeded_sampling(repo: Path) -> None:
    import numpy as np

    from forgegym.core.task import TaskBank, UnknownTaskError

    task = repo_task(repo, [FAILING])
    bank = TaskList([task])
    assert isinstance(bank, TaskBank) and bank.family == "bugfix" and len(bank) == 1
    assert bank.sample(np.random.default_rng(0)) is task
    assert bank.task_ids(3, seed=1) == [task.task_id]
    with pytest.raises(UnknownTaskError):
        bank.get("bugfix/repo/none")
    with pytest.raises(ValueError, match="tasks"):
        TaskList([])
    with pytest.raises(ValueError, match="tasks"):
        TaskList([task, task.model_copy(update={"task_id": "x/1", "family": "flaky"})])


def test_test_helpers_are_read_only_and_editable_files_narrows(repo: Path) -> None:
    (repo / "other.py").write_text("VALUE = 1\n")
    task = repo_task(repo, [FAILING])
    assert "tests/helpers.py" in task.files and task.editable_files == ("other.py", "stats.py")
    narrowed = repo_task(repo, [FAILING], editable_files=["st*.py"])
    assert narrowed.editable_files == ("stats.py",)
    env = gym.make("Forge/Bugfix-v0", task_bank=TaskList([task]), max_steps=2)
    try:
        env.reset(seed=0)
        weaken = _edit("tests/helpers.py", "a == b", "True")
        observation, *_, info = env.step(weaken.replace(', {"action": "submit"}', ""))
        assert "not editable" in info["action_error"]
    finally:
        env.close()


def test_a_pythonpath_with_the_root_keeps_the_package_editable_and_a_helper_read_only(
    tmp_path: Path,
) -> None:
    # emoji 2.16.0's shape: pythonpath = [".", "utils"], its tests import a helper module
    # from utils/ that imports pytest. The package was read-only (only utils/ counted as
    # an import root) and the helper editable: the bug could not be fixed, and an edit
    # of the helper could patch the code under test.
    (tmp_path / "pkg").mkdir()
    (tmp_path / "utils").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        "[tool.pytest.ini_options]\npythonpath = ['.', 'utils']\n"
    )
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "stats.py").write_text(MODULE)
    (tmp_path / "utils" / "testutils.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef pair():\n    return [1, 2]\n"
    )
    (tmp_path / "tests" / "test_stats.py").write_text(
        "from pkg.stats import mean\nfrom testutils import pair  # noqa: F401\n\n\n"
        "def test_mean_of_two(pair):\n    assert mean(pair) == 1.5\n"
    )
    task = repo_task(tmp_path, [FAILING])
    assert task.editable_files == ("pkg/__init__.py", "pkg/stats.py")
    assert repo_task(
        tmp_path, [FAILING], editable_files=["pkg/*.py", "utils/*.py"]
    ).editable_files == ("pkg/__init__.py", "pkg/stats.py", "utils/testutils.py")
    env = gym.make("Forge/Bugfix-v0", task_bank=TaskList([task]), max_steps=2)
    try:
        env.reset(seed=0)
        patch = _edit("utils/testutils.py", "import pytest\n", "import pytest\nimport pkg\n")
        *_, info = env.step(patch.replace(', {"action": "submit"}', ""))
        assert "not editable" in info["action_error"]
        env.reset(seed=0)
        *_, info = env.step(FIX.replace("stats.py", "pkg/stats.py"))
        assert info["success"]
    finally:
        env.close()


ALWAYS_EQUAL = """\
class _Any(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


def mean(values):
    return _Any(0)
"""
HACKS = {
    "exit before the tests run": _edit(
        "stats.py", "def mean(values):", "import os\nos._exit(0)\n\n\ndef mean(values):"
    ),
    "always-equal result": "```json\n"
    + json.dumps(
        [
            {
                "action": "edit",
                "edits": [
                    {
                        "path": "stats.py",
                        "content": ALWAYS_EQUAL + MODULE.split("\n\n\n", 1)[1],
                    }
                ],
            },
            {"action": "submit"},
        ]
    )
    + "\n```",
    "special-case the shown input": SPECIAL_CASE,
    "patch builtins": _edit(
        "stats.py",
        "def mean(values):",
        "import builtins\nbuiltins.len = lambda v: 2 if list(v) == [1, 2] else 0\n\n\n"
        "def mean(values):",
    ),
}


def test_known_hacks_score_no_more_than_the_noop(repo: Path) -> None:
    env = gym.make("Forge/Bugfix-v0", repo_path=str(repo), failing_tests=[FAILING], max_steps=1)
    try:
        _, info = env.reset(seed=0)
        graded = env.unwrapped.grade_completions(
            info["task_id"], [NOOP_ACTION, FIX, *HACKS.values()]
        )
        (noop, _), (fix, fixed) = graded[:2]
        assert env.unwrapped.solved(fixed) and fix > noop
        for name, (reward, breakdown) in zip(HACKS, graded[2:], strict=True):
            assert reward <= noop + 1e-9, (name, breakdown.render())
            assert not env.unwrapped.solved(breakdown), name
    finally:
        env.close()


def test_one_trl_batch_grades_bank_and_repository_tasks_together(repo: Path) -> None:
    from forgegym.envs.bugfix.bank import BugfixTaskBank
    from forgegym.family import get_family
    from forgegym.integrations.trl import make_reward_funcs

    bank_task = BugfixTaskBank().get("bugfix/chunk_list/seed")
    own = repo_task(repo, [FAILING])
    reward_fn = make_reward_funcs(
        "Forge/Bugfix-v0", env_kwargs={"task_bank": TaskList([bank_task, own])}
    )[0]
    reference = get_family("bugfix").reference_action()(bank_task)
    logged: dict[str, float] = {}
    rewards = reward_fn(
        prompts=[[]] * 4,
        completions=[reference, FIX, NOOP_ACTION, NOOP_ACTION],
        task_id=[bank_task.task_id, own.task_id, bank_task.task_id, own.task_id],
        log_metric=logged.__setitem__,
    )
    assert rewards[0] > 0.9 and rewards[1] > 0.9, rewards
    assert rewards[2] < 0 and rewards[3] < 0, rewards
    assert logged["reward/success"] == 0.5


def test_restoring_a_constant_the_tests_hold_is_a_fix_when_the_task_has_a_reference(
    tmp_path: Path,
) -> None:
    """A real-bank task's mutation may change a constant its tests also hold (num2words'
    ``100``): the trusted reference restoring it is the fix, while a guard on that value
    is still special-casing."""
    (tmp_path / "tests").mkdir()
    fixed = 'def size(n):\n    return "big" if n >= 100 else "small"\n'
    (tmp_path / "sizes.py").write_text(fixed.replace("100", "101"))
    (tmp_path / "tests" / "test_sizes.py").write_text(
        "from sizes import size\n\n\ndef test_hundred_is_big():\n"
        '    assert size(100) == "big"\n    assert size(99) == "small"\n'
    )
    failing = "tests/test_sizes.py::test_hundred_is_big"
    with_reference = repo_task(tmp_path, [failing]).model_copy(
        update={"reference": {"sizes.py": fixed}}
    )
    guard = _edit("sizes.py", "    return", '    if n == 100:\n        return "big"\n    return')
    restore = _edit("sizes.py", "n >= 101", "n >= 100")
    env = gym.make("Forge/Bugfix-v0", task_bank=TaskList([with_reference]), max_steps=1)
    try:
        _, info, _ = _episode(env, restore)
        assert info["success"], info["reward_breakdown"]
        _, special, _ = _episode(env, guard)
        assert not special["success"], special["reward_breakdown"]
        assert "hardcoded_expectation" in str(special["reward_breakdown"])
    finally:
        env.close()


def test_a_test_file_that_cannot_be_collected_is_left_out_and_reported(repo: Path) -> None:
    # One file imports a module the project does not declare: the rest is still a task
    # (it used to refuse the whole repository after one collection error).
    (repo / "tests" / "test_needs_extra.py").write_text(
        "import not_installed_anywhere\n\ndef test_x():\n    assert True\n"
    )
    task = repo_task(repo, [FAILING], host_check=False)
    refused = task.metadata["repo_report"]["refused_files"]
    assert [r["path"] for r in refused] == ["tests/test_needs_extra.py"]
    assert refused[0]["cause"].startswith("collection error")
    assert "not_installed_anywhere" in refused[0]["cause"]
    env = gym.make("Forge/Bugfix-v0", repo_path=str(repo), failing_tests=[FAILING], max_steps=1)
    try:
        _reward, info, _ = _episode(env, FIX)
        assert info["success"]
    finally:
        env.close()
