"""FlakyRepair repository mode: the cached dependency environment and the kwargs."""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the ids)

REPOS = Path(__file__).parents[2] / "fixtures" / "repos"


def test_a_local_dependency_is_installed_and_importable_in_the_sandbox(tmp_path: Path) -> None:
    repo = tmp_path / "flakydep"
    shutil.copytree(REPOS / "flakydep", repo)
    shutil.copytree(REPOS / "shapes" / "vendor", repo / "vendor")
    kwargs = {"repo_path": str(repo), "test_id": "tests/test_ids.py::test_label"}
    # Without its dependency the test module does not import: make says so.
    with pytest.raises(ValueError, match="does not collect"):
        gym.make("Forge/FlakyRepair-v0", **kwargs, test_dependencies=[], cache_dir=str(tmp_path))
    env = gym.make(
        "Forge/FlakyRepair-v0",
        **kwargs,
        test_dependencies=["./vendor/tinyunits"],
        cache_dir=str(tmp_path / "cache"),
        reruns=2,
    )
    try:
        env.reset(seed=0)
        obs, *_ = env.step('{"action": "run_tests"}')
        # The chaos reruns import the dependency from the cached environment.
        assert "[run_tests] pass rate 2/2" in obs, obs[-2000:]
        assert not list((repo / "vendor").rglob("*.egg-info"))  # the repository is untouched
    finally:
        env.close()


def test_an_unknown_kwarg_is_a_type_error_listing_the_accepted_names() -> None:
    with pytest.raises(TypeError, match=r"unknown keyword argument\(s\) \['test_ids'\]") as err:
        gym.make("Forge/FlakyRepair-v0", test_ids=["x"])
    for name in ("max_file_bytes", "max_files", "test_dependencies", "cache_dir", "test_id"):
        assert f"'{name}'" in str(err.value)
