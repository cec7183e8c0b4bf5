"""Repository mode on projects as they are (vendored fixtures under tests/fixtures/repos):
conftest fixtures, a src layout with a namespace package, the project's own pytest
configuration, a dependency installed from a local path into the cached environment, a
test that fails only in the sandbox (reported, left out of grading), a test file whose
collection the sandbox's runtime policy stops (reported, left out whole), a suite slower
than its fixed grading limit, and every repository option through ``gym.make``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the ids)
from forgegym.policies.navigate import NavigatePolicy

REPOS = Path(__file__).parents[2] / "fixtures" / "repos"
SHAPES = REPOS / "shapes"
FAILING = [
    "tests/test_geometry.py::test_perimeter",
    "tests/test_geometry.py::test_perimeter_in_metres",
]
FIX = {
    "action": "edit",
    "edits": [
        {
            "path": "src/shapes/geometry.py",
            "search": "    return rect.width + rect.height\n",
            "replace": "    return 2 * (rect.width + rect.height)\n",
        }
    ],
}


def _episode(env: Any, actions: list[dict[str, Any]]) -> dict[str, Any]:
    env.reset(seed=0)
    *_, info = env.step(json.dumps([*actions, {"action": "submit"}]))
    return info


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    cache = tmp_path_factory.mktemp("cache")
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(SHAPES),
        failing_tests=FAILING,
        test_dependencies=["./vendor/tinyunits"],
        cache_dir=str(cache),
    )
    yield env, cache
    env.close()


def test_the_project_runs_as_it_is_and_the_reverted_bug_succeeds(shapes: Any) -> None:
    env, _ = shapes
    _, info = env.reset(seed=0)
    task = env.unwrapped.task
    hidden = task.hidden
    # conftest fixtures (unit_square, domino), the src layout, the namespace package and
    # the vendored dependency all work: those tests pass on the buggy repository.
    assert "tests/test_geometry.py::test_area" in hidden["passing_tests"]
    assert "tests/test_plugins.py::test_circle_area" in hidden["passing_tests"]
    # The package is editable; docs/conf.py and the vendored dependency are not.
    assert info["editable_files"] == [
        "src/shapes/__init__.py",
        "src/shapes/geometry.py",
        "src/shapes_plugins/round/circle.py",
    ]
    report = info["repo_report"]
    assert report["dropped_addopts"] == ["--cov=shapes"]
    assert report["time_limit_s"] >= 10.0
    solved = _episode(env, [FIX])
    assert solved["success"], solved["reward_breakdown"]
    noop = _episode(env, [])
    assert not noop["success"] and noop["score"] < solved["score"]


def test_a_test_failing_only_in_the_sandbox_is_reported_and_not_graded(shapes: Any) -> None:
    env, _ = shapes
    _, info = env.reset(seed=0)
    report = info["repo_report"]
    binary = "tests/test_plugins.py::test_reads_linked_fixture"
    assert report["excluded"] == [binary]
    (difference,) = report["differences"]
    assert difference["sandbox"] == "failed" and difference["host"] == "passed"
    assert difference["cause"].startswith("file outside the copy")
    assert "tests/data/linked.bin" in difference["cause"]
    hidden = env.unwrapped.task.hidden
    assert binary in hidden["excluded"] and binary not in hidden["passing_tests"]
    # Not counted against a real fix: it still fails in the sandbox after the fix.
    info = _episode(env, [FIX])
    assert info["reward_breakdown"]["terms"]["regression"]["value"] == 0.0
    assert info["reward_breakdown"]["terms"]["visible"]["value"] == 1.0


def test_the_agent_cannot_change_the_trusted_conftest_or_configuration(shapes: Any) -> None:
    env, _ = shapes
    env.reset(seed=0)
    for path, content in (
        ("tests/conftest.py", "import pytest\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p no:python'\n"),
    ):
        obs, _, _, _, info = env.step(
            json.dumps({"action": "edit", "edits": [{"path": path, "content": content}]})
        )
        assert "not editable" in info["action_error"], info["action_error"]


def test_grading_runs_the_test_files_of_the_changed_modules_unless_asked(shapes: Any) -> None:
    env, _ = shapes
    env.reset(seed=0)
    grader = env.unwrapped.grader_for(env.unwrapped.task)
    hidden = env.unwrapped.task.hidden
    imports = hidden["test_imports"]
    assert "src/shapes/geometry.py" in imports["tests/test_geometry.py"]
    # The conftest's imports count for every test beneath it; the namespace package's
    # module only for the test that imports it.
    assert "src/shapes/geometry.py" in imports["tests/test_plugins.py"]
    assert "src/shapes_plugins/round/circle.py" not in imports["tests/test_geometry.py"]
    assert "src/shapes_plugins/round/circle.py" in imports["tests/test_plugins.py"]
    info = _episode(env, [FIX])
    assert "changed modules" in info["reward_breakdown"]["terms"]["visible"]["detail"]
    assert grader.full_suite is False


def test_every_repository_option_is_a_make_kwarg(shapes: Any, tmp_path: Path) -> None:
    _, cache = shapes
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(SHAPES),
        failing_tests=FAILING[:1],
        editable_files=["src/shapes/geometry.py", "docs/conf.py"],
        max_file_bytes=50_000,
        max_files=20,
        test_timeout_s=30.0,
        time_limit_multiple=2.0,
        time_limit_cap_s=120.0,
        test_dependencies=["./vendor/tinyunits"],
        cache_dir=str(cache),
        host_check=False,
        full_suite=True,
        max_steps=3,
    )
    try:
        _, info = env.reset(seed=0)
        assert info["editable_files"] == ["docs/conf.py", "src/shapes/geometry.py"]
        assert info["repo_report"]["host_status"] == "not run (host_check=False)"
        assert info["repo_report"]["time_limit_s"] == 30.0  # a fixed limit overrides
        assert env.unwrapped.grader_for(env.unwrapped.task).full_suite is True
        info = _episode(env, [FIX])
        assert info["success"]
        assert "changed modules" not in info["reward_breakdown"]["terms"]["visible"]["detail"]
    finally:
        env.close()
    with pytest.raises(ValueError, match="max_file_bytes=100"):
        gym.make(
            "Forge/Bugfix-v0", repo_path=str(SHAPES), failing_tests=FAILING, max_file_bytes=100
        )
    with pytest.raises(ValueError, match="max_files=2"):
        gym.make("Forge/Bugfix-v0", repo_path=str(SHAPES), failing_tests=FAILING, max_files=2)
    with pytest.raises(ValueError, match="repo_path: required with the repository-mode"):
        gym.make("Forge/Bugfix-v0", max_file_bytes=10_000)


def test_an_unknown_kwarg_is_a_type_error_listing_the_accepted_names() -> None:
    with pytest.raises(
        TypeError, match=r"unknown keyword argument\(s\) \['max_file_byte'\]"
    ) as err:
        gym.make("Forge/Bugfix-v0", max_file_byte=600_000)
    for name in ("max_file_bytes", "max_files", "test_timeout_s", "cache_dir", "editable_files"):
        assert f"'{name}'" in str(err.value)


def test_a_dependency_that_cannot_be_installed_fails_at_make(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="test_dependencies: './vendor/missing' is not a dir"):
        gym.make(
            "Forge/Bugfix-v0",
            repo_path=str(SHAPES),
            failing_tests=FAILING,
            test_dependencies=["./vendor/missing"],
            cache_dir=str(tmp_path),
        )


def test_a_suite_slower_than_the_fixed_limit_gets_a_measured_time_limit(tmp_path: Path) -> None:
    # A session fixture sleeps 4 s (no CPU), over the fixed grading limit given here
    # (grading_timeout_s=1; by default 10 s, and once a fixed 20 s that timed a slower
    # suite out at make). The baseline at make runs under the cap, and the limit of
    # every later run is 3x its measured time (+1 s), above the 10 s floor: without the
    # measured limit the graded run (4 s) would time out and the fix would not succeed.
    repo = tmp_path / "slowsuite"
    shutil.copytree(REPOS / "slowsuite", repo)
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(repo),
        failing_tests=["tests/check_clock.py::test_to_minutes"],  # setup.cfg's python_files
        host_check=False,
        max_steps=1,
        grading_timeout_s=1.0,
    )
    try:
        _, info = env.reset(seed=0)
        wall = info["repo_report"]["sandbox_wall_s"]
        assert wall > 4.0
        assert info["repo_report"]["time_limit_s"] == pytest.approx(3 * wall + 1.0, abs=0.1)
        assert env.unwrapped.task.hidden["time_limit_s"] > 12.0
        fix = {
            "action": "edit",
            "edits": [
                {"path": "pkg/clock.py", "search": "60 - minutes", "replace": "60 + minutes"}
            ],
        }
        *_, info = env.step(json.dumps([fix, {"action": "submit"}]))
        assert info["success"], info["reward_breakdown"]
    finally:
        env.close()


def test_a_test_file_whose_import_is_refused_is_reported_and_left_out(tmp_path: Path) -> None:
    # tests/test_codegen.py walks the garbage collector's objects at import: the runtime
    # policy stops its collection. Make leaves that file out whole (and test_dynamic_code, which compiles
    # inside its test) instead of refusing the repository.
    repo = tmp_path / "refusedimport"
    shutil.copytree(REPOS / "refusedimport", repo)
    env = gym.make(
        "Forge/Bugfix-v0",
        repo_path=str(repo),
        failing_tests=["tests/test_words.py::test_shout"],
        full_suite=True,  # grading runs every visible test file: the refused one is not
        max_steps=6,
    )
    try:
        _, info = env.reset(seed=0)
        report = info["repo_report"]
        (refused,) = report["refused_files"]
        assert refused["path"] == "tests/test_codegen.py"
        assert "refused gc.get_objects" in refused["cause"]
        causes = {d["nodeid"]: d for d in report["differences"]}
        twice = causes["tests/test_codegen.py::test_twice"]
        assert (twice["sandbox"], twice["host"]) == ("stopped", "passed")
        assert "while collecting its file" in twice["cause"]
        dynamic = causes["tests/test_words.py::test_dynamic_code"]
        assert dynamic["sandbox"] == "stopped" and "never run" in dynamic["cause"]
        assert report["n_tests"] == 5 and report["agreeing"] == 3
        task = env.unwrapped.task
        assert task.visible_test_files == ("tests/test_words.py",)
        assert task.hidden["passing_tests"] == [
            "tests/test_words.py::test_whisper",
            "tests/test_words.py::test_whisper_empty",
        ]
        fix = {
            "action": "edit",
            "edits": [
                {
                    "path": "pkg/words.py",
                    "search": 'text.lower() + "!"',
                    "replace": 'text.upper() + "!"',
                }
            ],
        }
        solved = _episode(env, [fix])
        assert solved["success"], solved["reward_breakdown"]
        noop = _episode(env, [])
        assert not noop["success"] and noop["score"] < solved["score"]
        # The navigating policy, told the fix (a repository has no reference of its
        # own) but not where it goes, finds it by searching and reading.
        policy = NavigatePolicy(
            env.unwrapped, reference=lambda task: json.dumps([fix, {"action": "submit"}])
        )
        obs, info = env.reset(seed=0)
        kinds = []
        done = False
        while not done:
            action = policy(obs, info)
            kinds.append(json.loads(action)["action"] if action.startswith("{") else "many")
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        assert kinds == ["list", "search", "read", "edit", "run_tests", "submit"]
        assert info["success"] and policy.fallbacks == 0, info["reward_breakdown"]
    finally:
        env.close()
    # Nothing gradable left (the only test file is refused): the clear error stays.
    (repo / "tests" / "test_words.py").unlink()
    with pytest.raises(ValueError, match="stops the collection of every test file"):
        gym.make(
            "Forge/Bugfix-v0",
            repo_path=str(repo),
            failing_tests=["tests/test_codegen.py::test_twice"],
            host_check=False,
        )
