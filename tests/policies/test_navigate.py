"""The ``navigate`` policy: it finds the fix's location by searching and reading, and
solves tasks without ever receiving more than the observation budget at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.cli import main
from forgegym.core.task import TaskList
from forgegym.play.results import EvalResults
from forgegym.policies import make, policy_names
from forgegym.policies.navigate import NavigatePolicy
from tests.fixtures.big_repo import BIG, BUG, big_repo_bank


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> TaskList:
    return big_repo_bank(tmp_path_factory.mktemp("big"))


def _play(env: gym.Env, policy: Any, task_id: str) -> tuple[dict[str, Any], list[str], int]:
    """Play one episode: the last info (with every step's ``action_error`` under
    ``"errors"``), the actions, and the longest observation."""
    obs, info = env.reset(options={"task_id": task_id})
    observations, actions, errors = [obs], [], []
    done = False
    while not done:
        action = policy(obs, info)
        actions.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        observations.append(obs)
        errors.append(info.get("action_error"))
        done = terminated or truncated
    return {**info, "errors": errors}, actions, max(map(len, observations))


def _actions(text: str) -> list[dict[str, Any]]:
    payload = json.loads(text)  # the policy replies with bare JSON
    return payload if isinstance(payload, list) else [payload]


def test_navigate_solves_a_repository_too_large_to_show_whole(bank: TaskList) -> None:
    task_id = bank.ids()[0]
    env = gym.make("Forge/Bugfix-v0", task_bank=bank, max_steps=8)
    try:
        policy = make("navigate", env)
        assert isinstance(policy, NavigatePolicy)
        info, actions, largest = _play(env, policy, task_id)
        source = bank.get(task_id).files[BIG]
    finally:
        env.close()
    assert info["success"] and policy.fallbacks == 0
    assert info["errors"] == [None] * 6
    assert len(source) > 12_000 >= largest  # never more than the budget at once
    kinds = [[a["action"] for a in _actions(text)] for text in actions]
    assert [k[0] for k in kinds] == ["list", "search", "read", "edit", "run_tests", "submit"]
    (edit,) = _actions(actions[3])
    assert edit["edits"] == [
        {"path": BIG, "search": edit["edits"][0]["search"], "replace": edit["edits"][0]["replace"]}
    ]
    assert BUG in edit["edits"][0]["search"]  # built from the lines it read


def test_navigate_locates_by_searching_not_by_being_told(bank: TaskList) -> None:
    # The module moved and the policy's knowledge of the fix names the old path: its
    # edit names the file its search found (the tests, importing the old module, fail
    # either way; only where the edit goes matters here).
    task = bank.get(bank.ids()[0])
    moved = "calc/core/engine_impl.py"
    files = {(moved if p == BIG else p): c for p, c in task.files.items()}
    relocated = task.model_copy(
        update={
            "task_id": task.task_id + "/moved",
            "files": files,
            "editable_files": tuple(moved if p == BIG else p for p in task.editable_files),
            "reference": {moved: task.reference[BIG]},
        }
    )
    env = gym.make("Forge/Bugfix-v0", task_bank=TaskList([relocated]), max_steps=8)
    try:
        policy = NavigatePolicy(env.unwrapped)
        env.reset(options={"task_id": relocated.task_id})
        plan = policy._plan(relocated)
        plan.hunks[:] = [h.__class__(BIG, h.old, h.new, h.anchor, h.offset) for h in plan.hunks]
        assert [h.path for h in plan.hunks] == [BIG]
        info, actions, _ = _play(env, policy, relocated.task_id)
    finally:
        env.close()
    (edit,) = _actions(actions[3])
    assert [e["path"] for e in edit["edits"]] == [moved] and policy.fallbacks == 0
    assert info["errors"][3] is None  # the edit applied


@pytest.mark.parametrize("max_steps", [3, 4, 5])
def test_navigate_fits_fewer_steps(max_steps: int) -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=max_steps)
    try:
        policy = make("navigate", env)
        info, actions, _ = _play(env, policy, "bugfix/chunk_list/seed")
    finally:
        env.close()
    assert info["success"] and len(actions) == max_steps and policy.fallbacks == 0
    assert _actions(actions[0])[0]["action"] == ("list" if max_steps >= 6 else "search")


def test_navigate_is_a_policy_of_every_code_family_only() -> None:
    for family in ("bugfix", "refactor", "performance", "flaky"):
        assert "navigate" in policy_names(family)
    assert "navigate" not in policy_names("oversight")
    env = gym.make("Forge/Oversight-v0")
    try:
        with pytest.raises(ValueError, match="navigate"):
            make("navigate", env)
    finally:
        env.close()


def test_eval_plays_navigate(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    argv = ["eval", "--env", "Forge/Refactor-v0", "--policy", "navigate", "--episodes", "2"]
    assert main([*argv, "--quiet", "--out", str(results)]) == 0
    episodes = EvalResults.load(results).episodes
    assert [e.policy for e in episodes] == ["navigate", "navigate"]
    assert all(e.success for e in episodes)
