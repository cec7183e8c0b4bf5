"""The rollout loop: autoreset handling, episode targets, per-episode seeds (the same
tasks on any number of envs as on one), adapters and saving."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.vector import AutoresetMode

from forgegym.play.results import Episode, Results
from forgegym.play.rollouts import (
    Trajectory,
    baseline_policy,
    batch_from_single,
    chat_messages,
    collect_rollouts,
    load_trajectories,
    openai_policy,
    save_trajectories,
    to_eval_results,
    transformers_policy,
    vllm_policy,
)
from tests.core.test_vector import TOY_ID, toy_answer


class Scripted:
    """Env 0's tasks are solved in two steps (plan, then submit); others get junk."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
        self.calls.append(len(observations))
        replies = []
        for info in infos:
            if info["step"] == 0:
                replies.append(toy_answer(info["task_id"]).replace(', {"action": "submit"}', ""))
            else:
                replies.append('{"action": "submit"}')
        return replies


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    "autoreset", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]
)
def test_collect_rollouts_every_autoreset_mode(mode: str, autoreset: AutoresetMode) -> None:
    envs = gym.make_vec(
        TOY_ID, num_envs=2, vectorization_mode=mode, vector_kwargs={"autoreset_mode": autoreset}
    )
    try:
        policy = Scripted()
        trajectories = collect_rollouts(envs, policy, episodes=5, seed=0, policy_name="scripted")
    finally:
        envs.close()
    assert [t.index for t in trajectories] == list(range(5))
    assert [t.seed for t in trajectories] == list(range(5))
    for t in trajectories:
        assert t.done and len(t.steps) == 2 and [s.index for s in t.steps] == [1, 2]
        assert t.success is True and t.score == pytest.approx(1.0)
        assert t.steps[0].reward_breakdown is None and t.steps[0].info["step"] == 1
        breakdown = t.steps[-1].reward_breakdown
        assert breakdown is not None and set(breakdown["terms"]) == {"correct", "answered"}
        assert t.steps[-1].info["success"] is True and "messages" not in t.steps[-1].info
        assert t.initial_observation and "step 0" in t.initial_observation
        assert t.steps[1].observation and "noted" in t.steps[1].observation
        assert t.env_id == TOY_ID and t.policy == "scripted" and t.task_id
    # Episode k plays the task reset(seed=k) picks, whichever env played it.
    assert [t.task_id for t in trajectories] == single_env_tasks(range(5))
    assert {t.env_index for t in trajectories} == {0, 1}
    # The policy is never asked to act on an autoreset step or for an idle env.
    assert sum(policy.calls) == 10


def test_rollouts_are_deterministic_across_modes() -> None:
    results = []
    for mode in ("sync", "async"):
        envs = gym.make_vec(TOY_ID, num_envs=2, vectorization_mode=mode)
        try:
            results.append(collect_rollouts(envs, Scripted(), episodes=4, seed=3))
        finally:
            envs.close()
    assert [t.task_id for t in results[0]] == [t.task_id for t in results[1]]


def test_baseline_policy_and_save(tmp_path: Path) -> None:
    envs = gym.make_vec(TOY_ID, num_envs=2)
    try:
        trajectories = collect_rollouts(
            envs, baseline_policy("noop", TOY_ID), episodes=3, seed=1, keep_observations=False
        )
    finally:
        envs.close()
    assert len(trajectories) == 3 and all(len(t.steps) == 1 for t in trajectories)
    assert all(t.success is False and t.initial_observation is None for t in trajectories)
    assert {t.policy for t in trajectories} == {"noop"}  # the baseline names itself
    path = save_trajectories(trajectories, tmp_path / "out" / "rollouts.json")
    assert load_trajectories(path) == trajectories
    assert json.loads(path.read_text())["format"] == "forgegym.episodes/1"
    results = to_eval_results(trajectories, note="x")
    assert isinstance(results, Results) and results.episodes == trajectories
    assert results.metadata == {"note": "x"}
    assert results.episodes[0].steps[0].reward_breakdown is not None


def test_policy_must_return_one_action_per_observation() -> None:
    envs = gym.make_vec(TOY_ID, num_envs=2)
    try:
        with pytest.raises(ValueError, match="policy"):
            collect_rollouts(envs, lambda obs, infos: ["x"], episodes=2)
        with pytest.raises(ValueError, match="episodes"):
            collect_rollouts(envs, lambda obs, infos: obs, episodes=0)
    finally:
        envs.close()


def test_chat_messages() -> None:
    info = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "old"}]}
    assert chat_messages("obs", info) == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "obs"},
    ]
    assert chat_messages("obs", info, history=True) == info["messages"]
    assert chat_messages("obs", {}) == [{"role": "user", "content": "obs"}]


def test_llm_adapters_with_fakes() -> None:
    observations, infos = ["a", "b"], [{}, {}]

    def pipe(chats: list[list[dict[str, str]]], **kwargs: Any) -> list[list[dict[str, Any]]]:
        assert kwargs == {"return_full_text": False, "max_new_tokens": 8}
        return [[{"generated_text": f"T:{chat[-1]['content']}"}] for chat in chats]

    assert transformers_policy(pipe, max_new_tokens=8)(observations, infos) == ["T:a", "T:b"]

    def output(text: str) -> SimpleNamespace:
        return SimpleNamespace(outputs=[SimpleNamespace(text=text)])

    llm = SimpleNamespace(
        chat=lambda chats, params: [output(f"C:{c[-1]['content']}") for c in chats],
        generate=lambda prompts, params: [output(f"G:{p}") for p in prompts],
    )
    assert vllm_policy(llm)(observations, infos) == ["C:a", "C:b"]
    assert vllm_policy(llm, chat=False)(observations, infos) == ["G:a", "G:b"]

    def create(model: str, messages: list[dict[str, str]], **kwargs: Any) -> SimpleNamespace:
        content = None if messages[-1]["content"] == "b" else f"O:{model}"
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=content))])

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    assert openai_policy(client, "m")(observations, infos) == ["O:m", ""]


def test_trajectory_is_the_episode_model() -> None:
    assert Trajectory is Episode
    t = Episode(env_id=TOY_ID, policy="p", task_id="toy/d1/1", score=0.0, success=False)
    assert not t.done and t.total_reward == 0.0 and t.reward_breakdown is None


def single_env_tasks(seeds: Any) -> list[str]:
    """The task each seed's reset picks on one env."""
    env = gym.make(TOY_ID)
    try:
        return [env.reset(seed=s)[1]["task_id"] for s in seeds]
    finally:
        env.close()


def answer_all(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
    """Solves odd-length task ids, fumbles the others: rewards that differ by task."""
    return [toy_answer(i["task_id"]) if len(i["task_id"]) % 2 else "not json" for i in infos]


@pytest.mark.parametrize("num_envs", [1, 3])
@pytest.mark.parametrize(
    ("mode", "autoreset"),
    [
        ("sync", AutoresetMode.NEXT_STEP),
        ("async", AutoresetMode.NEXT_STEP),
        ("sync", AutoresetMode.SAME_STEP),
        ("sync", AutoresetMode.DISABLED),
    ],
)
def test_tasks_and_rewards_do_not_depend_on_the_vector_env(
    num_envs: int, mode: str, autoreset: AutoresetMode
) -> None:
    """Episode k is reset with seed + k: a vector run of any size and mode plays the
    episodes a single env plays, step for step."""
    env = gym.make(TOY_ID)
    try:
        single = collect_rollouts(env, answer_all, episodes=7, seed=10, policy_name="p")
        assert env.unwrapped.task is not None  # the caller's env is left open
    finally:
        env.close()
    envs = gym.make_vec(
        TOY_ID,
        num_envs=num_envs,
        vectorization_mode=mode,
        vector_kwargs={"autoreset_mode": autoreset},
    )
    try:
        vector = collect_rollouts(envs, answer_all, episodes=7, seed=10, policy_name="p")
    finally:
        envs.close()
    assert [e.task_id for e in single] == single_env_tasks(range(10, 17))
    # Varied outcomes, so equal rewards are not a coincidence of constant ones.
    assert len({e.total_reward for e in single}) > 1
    drop = {"env_index", "initial_observation", "final_observation"}
    assert [e.model_dump(exclude=drop) for e in vector] == [
        e.model_dump(exclude=drop) for e in single
    ]


def test_explicit_per_episode_seeds_and_unseeded_runs() -> None:
    envs = gym.make_vec(TOY_ID, num_envs=2)
    try:
        played = collect_rollouts(envs, answer_all, episodes=3, seed=[5, 5, 42])
        assert [e.seed for e in played] == [5, 5, 42]
        assert [e.task_id for e in played] == single_env_tasks([5, 5, 42])
        unseeded = collect_rollouts(envs, answer_all, episodes=2)
        assert [e.seed for e in unseeded] == [None, None] and all(e.done for e in unseeded)
        with pytest.raises(ValueError, match="seed: a list gives one seed"):
            collect_rollouts(envs, answer_all, episodes=3, seed=[1, 2])
        with pytest.raises(ValueError, match="seed"):
            collect_rollouts(envs, answer_all, episodes=1, seed="0")  # type: ignore[arg-type]
    finally:
        envs.close()


def test_async_without_shared_memory_in_next_step_mode_is_refused() -> None:
    envs = gym.make_vec(
        TOY_ID, num_envs=2, vectorization_mode="async", vector_kwargs={"shared_memory": False}
    )
    try:
        with pytest.raises(ValueError, match="shared_memory"):
            collect_rollouts(envs, answer_all, episodes=2, seed=0)
    finally:
        envs.close()


def test_log_lines_and_on_episode(capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    seen: list[int] = []
    env = gym.make(TOY_ID)
    try:
        played = collect_rollouts(
            env,
            batch_from_single(lambda obs, info: toy_answer(info["task_id"])),
            episodes=2,
            seed=0,
            log=sys.stdout,
            on_episode=lambda e: seen.append(e.index),
        )
    finally:
        env.close()
    lines = capsys.readouterr().out.splitlines()
    assert seen == [0, 1] and [e.policy for e in played] == ["<lambda>", "<lambda>"]
    assert [line.split()[0] for line in lines] == ["[START]", "[STEP]", "[END]"] * 2
    assert lines[0] == f"[START] task={played[0].task_id} env={TOY_ID} model=<lambda>"
    assert lines[2].startswith("[END] success=true steps=1 score=1.000")


def test_a_canary_episode_keeps_the_canary_id_its_policy_never_sees() -> None:
    """D5: the policy is shown the base task's id; the episode records the canary id
    asked for, so the cheat rate counts it as a canary."""
    from forgegym.envs.oversight.canaries import CHEATS
    from forgegym.play.telemetry import episode_telemetry
    from forgegym.tasklib.canaries import base_id_of

    env = gym.make("Forge/Oversight-v0", max_steps=1)
    try:
        canaries = env.unwrapped.canary_bank()
        cid = canaries.task_ids(1, seed=0)[0]
        cheat = CHEATS["rubber_stamp"](canaries.get(cid))
        seen: list[str] = []

        def rubber_stamp(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
            seen.extend(str(i["task_id"]) for i in infos)
            return [cheat] * len(infos)

        (episode,) = collect_rollouts(
            env, rubber_stamp, episodes=1, seed=0, options={"task_id": cid}
        )
    finally:
        env.close()
    assert seen == [base_id_of(cid)] and episode.task_id == cid
    assert episode.success is True  # the cheat solved the canary it was given
    assert episode_telemetry([episode], {cid})["forgegym/cheat_rate"] == 1.0
