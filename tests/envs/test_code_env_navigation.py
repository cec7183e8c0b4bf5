"""Navigation and the observation budget in the code families' episode loop, shown on
Forge/Bugfix-v0: a built-in task (shown whole) and a synthetic repository too large
to show whole (a map, outlines, and list/read/search)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.core.task import TaskList
from tests.fixtures.big_repo import BIG, BUG, FAILING, HIDDEN_MARKER, big_repo_bank

BUILTIN = "bugfix/chunk_list/seed"


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> TaskList:
    return big_repo_bank(tmp_path_factory.mktemp("big"))


def _env(bank: TaskList | None = None, **kwargs: Any) -> gym.Env:
    options: dict[str, Any] = {"max_steps": 60, "shaping_weight": 0.0, **kwargs}
    if bank is not None:
        options["task_bank"] = bank
    return gym.make("Forge/Bugfix-v0", **options)


@pytest.fixture(scope="module")
def repo_env(bank: TaskList) -> Iterator[gym.Env]:
    env = _env(bank)
    yield env
    env.close()


def _reset(env: gym.Env) -> tuple[str, dict[str, Any]]:
    task_id = BUILTIN if env.unwrapped.task_bank.__class__ is not TaskList else None
    if task_id is None:
        task_id = env.unwrapped.task_bank.ids()[0]
    return env.reset(options={"task_id": task_id})


def test_first_observation_of_a_large_repository_is_a_map_within_the_budget(
    repo_env: gym.Env,
) -> None:
    obs, info = _reset(repo_env)
    source = repo_env.unwrapped.task.files[BIG]
    assert len(source) > 12_000
    assert len(obs) <= 12_000
    assert FAILING.split("::")[1] in obs  # the task statement (the failing test's output)
    assert "## Repository map" in obs and f"  {BIG}  {len(source):,} chars" in obs
    assert "Outline of calc/engine.py" in obs  # the failure points at the module
    assert "def clamp(value, low, high)" in obs  # ... whose outline shows the function
    assert BUG not in obs  # not the file itself
    assert "### tests/test_engine.py" in obs  # small files still shown whole
    for action in ("list {path?}", "read {path, start?, end?}", "search {pattern, path?, regex?}"):
        assert action in obs  # the protocol shows navigation
    assert HIDDEN_MARKER not in obs and "test_hidden.py" not in obs


def test_navigation_actions_read_the_workspace(repo_env: gym.Env) -> None:
    _reset(repo_env)
    obs, reward, *_, info = repo_env.step('{"action": "search", "pattern": "def clamp"}')
    assert "action_error" not in info and reward == 0.0
    line = next(int(x.split(":")[1]) for x in obs.splitlines() if x.startswith(f"{BIG}:"))
    obs, *_, info = repo_env.step(
        json.dumps({"action": "read", "path": BIG, "start": line, "end": line + 2})
    )
    assert f"{line + 2:>6}\t{BUG.rstrip()}" in obs
    obs, *_, info = repo_env.step('{"action": "list", "path": "calc"}')
    assert "calc/__init__.py" in obs and "(editable)" in obs and len(obs) <= 12_000
    # The edit reads back: navigation sees the workspace, not the pristine files.
    repo_env.step(
        json.dumps(
            {
                "action": "edit",
                "edits": [{"path": BIG, "search": BUG, "replace": BUG.replace("low))", "high))")}],
            }
        )
    )
    obs, *_ = repo_env.step(json.dumps({"action": "search", "pattern": "min(value, high)"}))
    assert f"{BIG}:{line + 2}:" in obs and "## Your changes so far" in obs


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"action": "read", "path": "../../etc/passwd"}, "leaves the workspace"),
        ({"action": "read", "path": "/etc/passwd"}, "is absolute"),
        ({"action": "list", "path": "nowhere"}, "no file or folder"),
        ({"action": "read", "path": "tests/test_hidden.py"}, "no file or folder"),
        ({"action": "read", "path": BIG, "start": 10**6}, "past its last line"),
    ],
)
def test_navigation_errors_are_action_errors_not_exceptions(
    repo_env: gym.Env, action: dict[str, Any], message: str
) -> None:
    _reset(repo_env)
    obs, reward, terminated, truncated, info = repo_env.step(json.dumps(action))
    assert message in info["action_error"] and message in obs
    assert reward == 0.0 and not (terminated or truncated)  # an action error, not a format one


def test_malformed_navigation_costs_the_format_penalty(repo_env: gym.Env) -> None:
    _reset(repo_env)
    for bad in (
        '{"action": "read", "path": "calc/engine.py", "start": -3}',
        '{"action": "search", "pattern": "(a{1000}){1000}", "regex": true}',
        '{"action": "search"}',
    ):
        obs, reward, *_, info = repo_env.step(bad)
        assert reward == pytest.approx(-0.1)
        assert info["action_error"] and "ACTION ERROR" in obs


def test_hidden_checks_are_never_found(repo_env: gym.Env) -> None:
    _reset(repo_env)
    obs, *_ = repo_env.step(
        json.dumps(
            [
                {"action": "search", "pattern": HIDDEN_MARKER},
                {"action": "search", "pattern": "test_clamp_inside", "regex": True},
                {"action": "list"},
            ]
        )
    )
    assert HIDDEN_MARKER in obs  # the pattern is echoed...
    assert obs.count("0 hit(s)") == 2  # ...but nothing matches
    assert "test_hidden" not in obs.replace(HIDDEN_MARKER, "")


def test_a_symlink_planted_in_the_workspace_is_not_followed(
    repo_env: gym.Env, tmp_path: Path
) -> None:
    _reset(repo_env)
    outside = tmp_path / "outside.py"
    outside.write_text("OUTSIDE_SECRET = 1\n")
    root = repo_env.unwrapped.workspace.root
    (root / "calc" / "leak.py").symlink_to(outside)
    obs, *_, info = repo_env.step('{"action": "read", "path": "calc/leak.py"}')
    assert "no file or folder 'calc/leak.py'" in info["action_error"]
    obs, *_ = repo_env.step('{"action": "search", "pattern": "OUTSIDE_SECRET"}')
    assert "0 hit(s)" in obs


def test_observation_budget_is_validated() -> None:
    for bad in (0, 3999, "12000", 12_000.0, True, None):
        with pytest.raises(ValueError, match="observation_budget"):
            gym.make("Forge/Bugfix-v0", observation_budget=bad)
    with pytest.raises(ValueError, match="observation_budget"):
        gym.make("Forge/Bugfix-v0", observation_budget=20_000, max_observation_chars=15_000)


@pytest.mark.parametrize("env_id", ["Forge/Refactor-v0", "Forge/Performance-v0"])
def test_every_code_family_takes_observation_budget(env_id: str) -> None:
    with pytest.raises(ValueError, match="observation_budget"):
        gym.make(env_id, observation_budget=-1)
    env = gym.make(env_id, observation_budget=4000, max_steps=1)
    try:
        obs, _ = env.reset(seed=0)
        assert len(obs) <= 4000
    finally:
        env.close()


def test_small_budget_turns_a_builtin_task_into_a_map() -> None:
    task_id = "performance/sliding_median/bug0/balanced"
    small = gym.make("Forge/Performance-v0", observation_budget=4000, max_steps=1)
    whole = gym.make("Forge/Performance-v0", max_steps=1)
    try:
        obs, _ = small.reset(options={"task_id": task_id})
        full, _ = whole.reset(options={"task_id": task_id})
        assert len(full) > 4000 and len(obs) <= 4000
        assert "## Repository map" in obs and "## Repository map" not in full
        assert "Outline of " in obs  # the editable module the task is about
    finally:
        small.close()
        whole.close()


_PATHS = st.sampled_from(
    ["calc", "calc/engine.py", "tests/test_engine.py", "", "..", "/etc", "calc/nothing.py"]
)
_WORDS = st.sampled_from(["clamp", "def ", "return total", "value", "x" * 200, "(", "zzz"])
_NAV = st.one_of(
    st.builds(lambda p: {"action": "list", "path": p}, _PATHS),
    st.builds(
        lambda p, s, n: {"action": "read", "path": p, "start": s, "end": s + n},
        _PATHS,
        st.integers(1, 3000),
        st.integers(0, 5000),
    ),
    st.builds(lambda w, r: {"action": "search", "pattern": w, "regex": r}, _WORDS, st.booleans()),
    st.builds(
        lambda n: {"action": "edit", "edits": [{"path": "@EDITABLE@", "content": "y = 1\n" * n}]},
        st.integers(1, 20_000),
    ),
    st.builds(lambda n: {"action": "plan", "text": "p" * n}, st.integers(1, 50_000)),
    st.just({"action": "lint"}),
)
_STEP = st.one_of(
    _NAV.map(json.dumps),
    st.lists(_NAV, min_size=2, max_size=16).map(json.dumps),
    st.text(max_size=300),
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(_STEP, min_size=1, max_size=5), st.sampled_from([4000, 12_000]))
def test_no_observation_exceeds_the_budget(bank: TaskList, steps: list[str], budget: int) -> None:
    for which in (bank, None):  # a large repository, and a built-in task
        env = _env(which, observation_budget=budget)
        try:
            obs, _ = _reset(env)
            assert len(obs) <= budget
            editable = env.unwrapped.task.editable_files[0]
            for action in steps:
                obs, _, _, _, info = env.step(action.replace("@EDITABLE@", editable))
                assert len(obs) <= budget
                assert len(info["messages"][-1]["content"]) <= budget
        finally:
            env.close()
