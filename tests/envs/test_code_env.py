"""CodeEnv behaviour shared by the code families, shown on Forge/Bugfix-v0."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.policies import NOOP_ACTION
from forgegym.policies.registry import default_reference_action
from forgegym.rewards import potential

TASK_ID = "bugfix/chunk_list/seed"


def reference_edit(env: gym.Env) -> str:
    task = env.unwrapped.task_bank.get(TASK_ID)
    edits = [{"path": p, "content": c} for p, c in task.reference.items()]
    return json.dumps({"action": "edit", "edits": edits})


def test_shaping_pays_the_change_of_potential_and_sums_to_zero() -> None:
    weight = 0.5
    env = gym.make("Forge/Bugfix-v0", max_steps=4, shaping_weight=weight)
    try:
        env.reset(options={"task_id": TASK_ID})
        p0 = env.unwrapped.run_visible_tests().pass_rate
        assert 0.0 < p0 < 1.0
        _, run_reward, *_, info = env.step('{"action": "run_tests"}')
        # The potential is 0 at the start: the first parsed step collects w·Φ(p0).
        assert run_reward == info["shaping"] == pytest.approx(weight * potential(p0))
        _, edit_reward, *_ = env.step(reference_edit(env))
        assert edit_reward == pytest.approx(weight * (potential(1.0) - potential(p0)))
        _, submit_reward, terminated, _, info = env.step('{"action": "submit"}')
        assert terminated
        assert info["shaping"] == pytest.approx(-weight * potential(1.0))
        total = info["reward_breakdown"]["total"]
        # The potential is 0 at the end too: the return is the final total.
        assert run_reward + edit_reward + submit_reward == pytest.approx(total)
    finally:
        env.close()


def test_reset_runs_no_tests_and_a_first_read_step_pays_the_starting_potential() -> None:
    """The starting pass rate is measured when a step needs it (a real task's visible
    suite takes seconds at reset), with the reward it had when reset measured it."""
    weight = 0.5
    env = gym.make("Forge/Bugfix-v0", max_steps=4, shaping_weight=weight)
    try:
        runner = env.unwrapped.runner
        run, jobs = runner.run, []

        def counted(job):  # noqa: ANN001, ANN202 - a spy on the env's runner
            jobs.append(run(job))
            return jobs[-1]

        runner.run = counted
        env.reset(options={"task_id": TASK_ID})
        assert jobs == []  # no run at reset
        _, read_reward, *_ = env.step('{"action": "plan", "text": "read first"}')
        assert len(jobs) == 1  # the starting pass rate, measured by the first step
        p0 = jobs[0].pass_rate
        assert 0.0 < p0 < 1.0 and read_reward == pytest.approx(weight * potential(p0))
        env.reset(options={"task_id": TASK_ID})
        _, again, *_ = env.step('{"action": "plan", "text": "read first"}')
        assert again == read_reward and len(jobs) == 1  # measured once per task
        env.reset(options={"task_id": TASK_ID})
        _, edit_reward, *_ = env.step(reference_edit(env))
        assert edit_reward == pytest.approx(weight * potential(1.0))
    finally:
        env.close()


def test_shaping_sums_to_zero_when_the_budget_runs_out_on_a_parse_error() -> None:
    # Truncation is graded as a submit, so it must not pay more shaping than submitting,
    # even when the last action does not parse.
    weight = 0.5
    env = gym.make("Forge/Bugfix-v0", max_steps=3, shaping_weight=weight)
    try:
        env.reset(options={"task_id": TASK_ID})
        _, plan_reward, *_ = env.step('{"action": "plan", "text": "look at the code"}')
        _, edit_reward, *_ = env.step(reference_edit(env))
        assert plan_reward + edit_reward == pytest.approx(weight * potential(1.0))
        _, last_reward, terminated, truncated, info = env.step("not an action")
        assert truncated and not terminated
        breakdown = info["reward_breakdown"]
        assert breakdown["terms"]["format"]["value"] == pytest.approx(-0.1)
        assert plan_reward + edit_reward + last_reward == pytest.approx(breakdown["total"])
        assert info["success"]  # the format penalty costs reward, not the fix's success
    finally:
        env.close()


def test_batch_grading_equals_single_turn_steps() -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=1)
    try:
        task = env.unwrapped.task_bank.get(TASK_ID)
        completions = [default_reference_action(task), NOOP_ACTION, "not an action"]
        batch = env.unwrapped.grade_completions(TASK_ID, completions)
        for completion, (reward, breakdown) in zip(completions, batch, strict=True):
            env.reset(options={"task_id": TASK_ID})
            _, step_reward, _, _, info = env.step(completion)
            assert step_reward == pytest.approx(reward)
            assert info["score"] == pytest.approx(breakdown.score)
        assert batch[0][0] > batch[1][0] > batch[2][0]
    finally:
        env.close()


def test_run_tests_reports_failures_and_unknown_ids() -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=5)
    try:
        env.reset(options={"task_id": TASK_ID})
        observation, *_ = env.step('{"action": "run_tests"}')
        assert "FAILED" in observation and "passed" in observation
        observation, *_, info = env.step('{"action": "run_tests", "tests": ["nope::nope"]}')
        assert "unknown test ids ['nope::nope']" in observation
        assert info["action_error"].startswith("run_tests rejected: unknown test ids")
        assert info["action_error"] in observation
    finally:
        env.close()


def test_an_edit_that_does_not_compile_shows_the_error_right_away() -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=5)
    try:
        _, info = env.reset(options={"task_id": TASK_ID})
        path = info["editable_files"][0]
        broken = {"action": "edit", "edits": [{"path": path, "content": "def f(:\n    return 1\n"}]}
        observation, *_, info = env.step(json.dumps(broken))
        result = observation.split("## Result of your last action", 1)[1]
        assert "does not compile" in result and f"{path}:1:" in result
        assert "SyntaxError" in result and "def f(:" in result
        assert "action_error" not in info  # applied, not rejected: the file did change
        fixed = {"action": "edit", "edits": [{"path": path, "content": "def f():\n    return 1\n"}]}
        observation, *_ = env.step(json.dumps(fixed))
        result = observation.split("## Result of your last action", 1)[1]
        assert f"Applied edits to: {path}" in result and "does not compile" not in result
    finally:
        env.close()


def test_every_rejected_action_sets_action_error() -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=8)
    try:
        _, info = env.reset(options={"task_id": TASK_ID})
        path = info["editable_files"][0]
        rejected = [
            json.dumps(
                {"action": "edit", "edits": [{"path": path, "search": "nope", "replace": "x"}]}
            ),
            json.dumps({"action": "edit", "edits": [{"path": "../x.py", "content": "x"}]}),
            '{"action": "run_tests", "tests": ["nope::nope"]}',
            '{"action": "edit", "edits": [{"path": "x.py", "search": "a"',  # cut off
            "no action here",
        ]
        for action in rejected:
            observation, *_, info = env.step(action)
            assert info.get("action_error"), action
            assert info["action_error"] in observation, action
        # A step whose actions all ran has no action_error.
        _, *_, info = env.step('{"action": "plan", "text": "read the code"}')
        assert "action_error" not in info
    finally:
        env.close()


def test_editing_a_read_only_test_is_rejected_and_reported() -> None:
    env = gym.make("Forge/Bugfix-v0", max_steps=5)
    try:
        _, info = env.reset(options={"task_id": TASK_ID})
        test_file = info["visible_test_files"][0]
        action = {"action": "edit", "edits": [{"path": test_file, "content": "def test(): pass\n"}]}
        observation, *_ = env.step(json.dumps(action))
        assert "not editable" in observation
        assert env.unwrapped.workspace.changed_files() == []
    finally:
        env.close()


def test_runner_workers_gives_the_env_its_own_pool() -> None:
    from forgegym.sandbox.runners import get_default_runner

    env = gym.make("Forge/Bugfix-v0", runner_workers=1)
    base = env.unwrapped
    env.reset(options={"task_id": TASK_ID})
    env.step('{"action": "run_tests"}')
    assert base.runner is not get_default_runner() and base.runner.workers == 1
    own = base.runner
    env.close()
    assert own._closed
    with pytest.raises(ValueError, match="runner_workers"):
        gym.make("Forge/Bugfix-v0", runner_workers=0)
