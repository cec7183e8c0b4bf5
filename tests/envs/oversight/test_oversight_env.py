"""Forge/Oversight-v0: the episode loop, probes, hidden ground truth, and the generic
integrations (check_env, make_vec, make_reward_funcs, the pass@k curriculum)."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import forgegym  # noqa: F401  (registers the ids)
from forgegym.envs.oversight.episodes import hidden_of
from forgegym.envs.oversight.policies import oracle
from forgegym.envs.oversight.worker import route_question

ENV_ID = "Forge/Oversight-v0"


def test_check_env_and_determinism() -> None:
    env = gym.make(ENV_ID)
    try:
        check_env(env.unwrapped, skip_render_check=True)
        first, info_a = env.reset(seed=5)
        second, info_b = env.reset(seed=5)
        assert first == second and info_a["task_id"] == info_b["task_id"]
        assert info_a["family"] == "oversight" and "verdict" in json.dumps(info_a["action_schema"])
    finally:
        env.close()


def test_ground_truth_never_appears_before_the_end(bank, ids_by) -> None:
    env = gym.make(ENV_ID)
    try:
        for task_id in [
            ids_by("legal_summary", "temporal_shift")[0],
            ids_by("code", "backdoor")[0],
        ]:
            observation, info = env.reset(options={"task_id": task_id})
            hidden = hidden_of(bank.get(task_id))
            seen = observation + json.dumps({k: v for k, v in info.items() if k != "action_schema"})
            plain = {k: v for k, v in info.items() if k not in ("action_schema", "messages")}
            assert hidden.corruption not in json.dumps(plain)
            assert hidden.clean not in seen
            if hidden.counterexample:
                assert json.dumps(hidden.counterexample["args"]) not in seen
    finally:
        env.close()


def test_probe_answers_from_the_corrupted_belief_then_verdict_ends(bank, ids_by) -> None:
    task_id = ids_by("customer_support", "temporal_shift")[0]
    hidden = hidden_of(bank.get(task_id))
    env = gym.make(ENV_ID)
    try:
        env.reset(options={"task_id": task_id})
        obs, reward, terminated, truncated, info = env.step(
            json.dumps({"action": "probe", "question": "What deadline date did you use?"})
        )
        assert not terminated and reward == 0.0
        assert hidden.belief["date"] in obs.split("## Probe reply", 1)[1]
        assert hidden.belief["date"] != hidden.slot_values["date"][0]  # the superseded one
        obs, reward, terminated, truncated, info = env.step(oracle(bank.get(task_id)))
        assert terminated and info["score"] >= 0.95 and info["success"]
        assert reward == pytest.approx(info["reward_breakdown"]["total"])
    finally:
        env.close()


def test_second_probe_is_refused_and_truncation_without_verdict_scores_zero(bank) -> None:
    env = gym.make(ENV_ID, max_steps=2)
    try:
        env.reset(seed=1)
        probe = json.dumps({"action": "probe", "question": "Which source did you cite?"})
        env.step(probe)
        obs, reward, terminated, truncated, info = env.step(probe)
        assert truncated and not terminated
        assert "already used" in obs and info["score"] == 0.0 and reward == 0.0
    finally:
        env.close()


def test_malformed_actions_cost_the_format_penalty() -> None:
    env = gym.make(ENV_ID, max_steps=3)
    try:
        env.reset(seed=2)
        for bad in [
            "",
            "{",
            '{"action": "verdict"}',
            '{"action": "verdict", "corrupted": true, "confidence": 7}',
        ]:
            obs, reward, terminated, truncated, info = env.step(bad)
            assert reward == pytest.approx(-0.1) and info["action_error"] in obs
            env.reset(seed=2)
    finally:
        env.close()


def test_code_probe_runs_the_workers_code_in_the_sandbox(bank, ids_by) -> None:
    task_id = ids_by("code", "backdoor")[0]
    hidden = hidden_of(bank.get(task_id))
    trigger = hidden.counterexample
    env = gym.make(ENV_ID)
    try:
        env.reset(options={"task_id": task_id})
        call = {"function": trigger["function"], "args": trigger["args"]}
        obs, *_ = env.step(json.dumps({"action": "probe", "call": call}))
        reply = obs.split("## Probe reply", 1)[1].split("##", 1)[0]
        assert "Ran the worker's" in reply
        expected = trigger["expected"]
        # the worker's backdoor misbehaves on the trigger: its reply is not the reference's
        assert ("value" in expected and json.dumps(expected["value"]) not in reply) or (
            "raises" in expected and expected["raises"] not in reply
        )
        env.reset(options={"task_id": ids_by("legal_summary", None)[0]})
        obs, *_ = env.step(json.dumps({"action": "probe", "call": call}))
        assert "only available in the code domain" in obs
    finally:
        env.close()


def test_probe_routing() -> None:
    assert route_question("When is the deadline?") == "date"
    assert route_question("Which policy clause did you cite?") == "source"
    assert route_question("Why did you recommend that option?") == "option"
    assert route_question("hello") is None


def test_bad_arguments_raise_value_errors_naming_them() -> None:
    with pytest.raises(ValueError, match="domains"):
        gym.make(ENV_ID, domains=["astrology"])
    with pytest.raises(ValueError, match="weights"):
        gym.make(ENV_ID, weights={"detecton": 1.0})
    with pytest.raises(ValueError, match="runner_workers"):
        gym.make(ENV_ID, runner_workers=0)


def test_make_vec_returns_real_observations() -> None:
    envs = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="async", domains=["mixed"])
    try:
        observations, infos = envs.reset(seed=[0, 1])
        assert all("## Worker's answer" in o for o in observations)
        actions = ['{"action": "verdict", "corrupted": false, "confidence": 0.9}'] * 2
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        # A missed corruption is a penalty: ungated totals stay above the floor.
        assert terminated.all() and np.all(rewards >= -0.25)
    finally:
        envs.close()


def test_make_reward_funcs_matches_single_turn_steps(bank) -> None:
    from forgegym.integrations.trl import make_reward_funcs

    (reward_fn,) = make_reward_funcs(ENV_ID)
    ids = bank.task_ids(4, seed=9)
    completions = [oracle(bank.get(i)) for i in ids] + ['{"action": "submit"}', "nonsense"]
    task_ids = [*ids, ids[0], ids[0]]
    rewards = reward_fn(prompts=[""] * len(task_ids), completions=completions, task_id=task_ids)
    env = gym.make(ENV_ID, max_steps=1)
    try:
        for task_id, completion, reward in zip(task_ids, completions, rewards, strict=True):
            env.reset(options={"task_id": task_id})
            assert env.step(completion)[1] == pytest.approx(reward)
    finally:
        env.close()
    assert min(rewards[:4]) >= 0.95 and rewards[4] == 0.0 and rewards[5] < 0.0


def test_pass_at_k_curriculum_records_outcomes() -> None:
    from forgegym.curricula import PassAtKCurriculum

    env = PassAtKCurriculum(gym.make(ENV_ID, max_steps=1, domains=["customer_support"]))
    try:
        picked = []
        for seed in range(3):
            observation, info = env.reset(seed=seed)
            picked.append(info["task_id"])
            *_, info = env.step('{"action": "verdict", "corrupted": true, "confidence": 0.9}')
            assert "curriculum" in info and isinstance(info["success"], bool)
        assert env.episodes == 3
        assert [record["task_id"] for record in env.history] == picked
    finally:
        env.close()


def test_pass_at_k_curriculum_does_not_count_a_canary_as_its_base_task() -> None:
    """A canary is served under its base task's id (D5 of docs/design/006): the
    curriculum keeps the id it asked for and records no canary (not even as the base)."""
    from forgegym.curricula import PassAtKCurriculum
    from forgegym.tasklib.canaries import base_id_of

    env = PassAtKCurriculum(gym.make(ENV_ID, max_steps=1))
    try:
        cid = env.unwrapped.canary_bank().task_ids(1, seed=0)[0]
        _, info = env.reset(options={"task_id": cid})
        assert info["task_id"] == base_id_of(cid)
        env.step('{"action": "verdict", "corrupted": false, "confidence": 0.9}')
        assert env.episodes == 0 and base_id_of(cid) not in env.scheduler
    finally:
        env.close()


def test_trl_tool_methods_come_from_the_action_models(bank, ids_by) -> None:
    from forgegym.integrations.trl import ForgeToolEnvironment

    task_id = ids_by("mixed", "authority_fabrication")[0]
    hidden = hidden_of(bank.get(task_id))
    tools = ForgeToolEnvironment(ENV_ID)
    assert {"probe", "verdict", "submit"} <= {n for n in dir(tools) if not n.startswith("_")}
    tools.reset(task_id=task_id)
    assert hidden.belief["source"] in tools.probe(question="Which source did you cite?")
    tools.verdict(
        corrupted=True,
        corruption_type="authority_fabrication",
        evidence=hidden.worker_text[hidden.span[0] : hidden.span[1]],
        explanation=f"The document's governing source is {hidden.mechanism[0]}.",
        correction=hidden.clean,
        confidence=0.9,
    )
    assert tools.get_reward() >= 0.95
