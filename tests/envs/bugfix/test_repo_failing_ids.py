"""``failing_tests`` matched as pytest matches node ids: a parametrised test's base id
(or a class) selects its failing cases, and an id that selects nothing points at the
collected ids nearest to it."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.envs.bugfix.repo import match_failing_tests

VERDICTS = {
    "tests/test_operations.py::test_add": True,
    "tests/test_operations.py::test_subtract[json]": False,
    "tests/test_operations.py::test_subtract[memory]": False,
    "tests/test_operations.py::test_subtract[cache]": True,
    "tests/test_operations.py::test_subtraction_big": False,
    "tests/test_operations.py::TestDivide::test_zero": False,
    **{f"tests/test_aaa.py::test_{i}": True for i in range(20)},
}


def test_a_base_id_selects_its_failing_parametrisations() -> None:
    assert match_failing_tests(["tests/test_operations.py::test_subtract"], VERDICTS) == [
        "tests/test_operations.py::test_subtract[json]",
        "tests/test_operations.py::test_subtract[memory]",
    ]
    assert match_failing_tests(["tests/test_operations.py::TestDivide"], VERDICTS) == [
        "tests/test_operations.py::TestDivide::test_zero"
    ]
    exact = "tests/test_operations.py::test_subtraction_big"
    assert match_failing_tests([exact], VERDICTS) == [exact]


def test_an_id_that_selects_nothing_points_at_the_nearest_ids() -> None:
    with pytest.raises(ValueError) as caught:
        match_failing_tests(["tests/test_operations.py::test_subtrac"], VERDICTS)
    message = str(caught.value)
    assert "is not collected" in message
    assert "tests/test_operations.py::test_subtract[json]" in message
    assert "tests/test_aaa.py" not in message  # not the first ids alphabetically


def test_a_selection_that_only_passes_is_refused() -> None:
    with pytest.raises(ValueError, match="passes on the unmodified repository"):
        match_failing_tests(["tests/test_operations.py::test_add"], VERDICTS)


PARAMETRISED = """\
import pytest

from ops import subtract


@pytest.mark.parametrize("store", ["json", "memory"])
def test_subtract(store):
    assert subtract(3, 1) == 2


def test_add():
    assert 1 + 1 == 2
"""


def test_repository_mode_takes_a_base_id(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "ops.py").write_text("def subtract(a, b):\n    return a + b\n")
    (tmp_path / "tests" / "test_operations.py").write_text(PARAMETRISED)
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(tmp_path),
        failing_tests=["tests/test_operations.py::test_subtract"],
        max_steps=1,
    )
    try:
        _, info = env.reset(seed=0)
        hidden = env.unwrapped.task.hidden
        assert sorted(hidden["failing_tests"]) == [
            "tests/test_operations.py::test_subtract[json]",
            "tests/test_operations.py::test_subtract[memory]",
        ]
    finally:
        env.close()
