"""TRL integration: datasets, reward functions, GRPO training and environment_factory."""

from __future__ import annotations

import json
from pathlib import Path
from unittest.mock import patch

import gymnasium as gym
import pytest
from toy_forge import TOY_ENV_ID, register_toy, solve_action

import forgegym  # noqa: F401  (registers the Forge/* ids)
from forgegym.curricula import CurriculumScheduler

pytest.importorskip("trl")
pytest.importorskip("triton")

from forgegym.integrations.tiny import build_tiny_model, build_tiny_tokenizer  # noqa: E402
from forgegym.integrations.trl import (  # noqa: E402
    ForgeToolEnvironment,
    completion_text,
    curriculum_config_overrides,
    make_dataset,
    make_environment_factory,
    make_reward_funcs,
    telemetry_callback,
)

register_toy()
REAL_IDS = ("Forge/Bugfix-v0", "Forge/FlakyRepair-v0")


def _bank(env_id: str):
    env = gym.make(env_id)
    try:
        return env.unwrapped.task_bank
    finally:
        env.close()


def _grpo_args(tmp_path: Path, **extra):
    from trl import GRPOConfig

    base = dict(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=2,
        logging_steps=1,
        save_strategy="no",
        learning_rate=0.1,
    )
    base.update(extra)
    return GRPOConfig(**base)


# ------------------------------------------------------------------ pieces
def test_make_dataset_columns_and_determinism() -> None:
    ds = make_dataset(TOY_ENV_ID, 5, seed=3)
    assert set(ds.column_names) == {"prompt", "task_id", "env_id", "difficulty", "canary"}
    assert not any(ds["canary"])
    assert len(ds) == 5 and len(set(ds["task_id"])) == 5
    row = ds[0]
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert row["task_id"] in row["prompt"][1]["content"] or "Return" in row["prompt"][1]["content"]
    assert row["env_id"] == TOY_ENV_ID and row["difficulty"] in (0, 1, 2)
    assert make_dataset(TOY_ENV_ID, 5, seed=3)["task_id"] == ds["task_id"]
    level = make_dataset(TOY_ENV_ID, 3, difficulty=2)
    assert set(level["difficulty"]) == {2}
    with pytest.raises(ValueError, match="^n "):
        make_dataset(TOY_ENV_ID, 0)


def test_make_dataset_with_curriculum_streams_from_scheduler() -> None:
    import datasets

    sched = CurriculumScheduler(_bank(TOY_ENV_ID), {"seed": 1})
    ds = make_dataset(TOY_ENV_ID, 1, curriculum=sched)
    assert isinstance(ds, datasets.IterableDataset)
    rows = [row for _, row in zip(range(4), ds, strict=False)]
    assert all(row["task_id"] in sched for row in rows)
    assert curriculum_config_overrides() == {"shuffle_dataset": False}


def test_completion_text() -> None:
    assert completion_text("x") == "x"
    assert completion_text([{"role": "assistant", "content": "a"}]) == "a"
    assert (
        completion_text([{"role": "assistant", "content": [{"type": "text", "text": "b"}]}]) == "b"
    )


def test_reward_funcs_grade_group_and_report() -> None:
    sched = CurriculumScheduler(_bank(TOY_ENV_ID), {"seed": 0})
    (reward,) = make_reward_funcs(TOY_ENV_ID, curriculum=sched)
    logged: dict[str, float] = {}
    tid_a, tid_b = "toy/d0/5", "toy/d1/6"
    completions = [
        [{"role": "assistant", "content": solve_action(tid_a)}],
        [{"role": "assistant", "content": '{"action": "submit"}'}],
        [{"role": "assistant", "content": "no json here"}],
        [{"role": "assistant", "content": solve_action(tid_b)}],
    ]
    values = reward(
        prompts=[[]] * 4,
        completions=completions,
        task_id=[tid_a, tid_a, tid_b, tid_b],
        log_metric=lambda name, value: logged.__setitem__(name, value),
        trainer_state=None,
    )
    assert values == [1.0, 0.0, pytest.approx(-0.1), 1.0]
    assert sched._tasks[tid_a].trials == 2 and sched._tasks[tid_a].successes == 1
    assert sched._tasks[tid_b].trials == 2 and sched._tasks[tid_b].successes == 1
    assert logged["reward/success"] == 0.5
    assert logged["reward/hidden"] == 0.5
    assert "curriculum/learnable" in logged


def test_make_dataset_mixes_canaries_at_the_rate_seeded() -> None:
    ds = make_dataset("Forge/Bugfix-v0", 12, seed=2, canary_rate=0.5)
    flags = list(ds["canary"])
    assert 0 < sum(flags) < 12  # seeded: this draw mixes both kinds
    assert all(
        flag == tid.startswith("canary/") for flag, tid in zip(flags, ds["task_id"], strict=True)
    )
    assert make_dataset("Forge/Bugfix-v0", 12, seed=2, canary_rate=0.5)["task_id"] == ds["task_id"]
    plain = make_dataset("Forge/Bugfix-v0", 12, seed=2)
    whole = make_dataset("Forge/Bugfix-v0", 12, seed=2, canary_rate=0.5, canary_eligible_rows=False)
    # A canary row takes the place of a bank row; the other rows are unchanged (the
    # whole bank's, with canary_eligible_rows=False; see the test below for the default).
    assert [t for t, f in zip(whole["task_id"], flags, strict=True) if not f] == [
        t for t, f in zip(plain["task_id"], flags, strict=True) if not f
    ]
    assert list(whole["canary"]) == flags
    everything = make_dataset("Forge/Bugfix-v0", 3, canary_rate=1.0)
    assert all(everything["canary"])
    with pytest.raises(ValueError, match="canary_rate"):
        make_dataset("Forge/Bugfix-v0", 3, canary_rate=1.5)
    with pytest.raises(ValueError, match="has no canaries"):
        make_dataset(TOY_ENV_ID, 3, canary_rate=0.1)


def test_with_canaries_every_row_is_a_task_that_could_be_one() -> None:
    """D7 (issue #37): mixed with canaries, the other rows are drawn among the tasks that
    can carry one, so "this task could never be a canary" (Refactor's
    ``state_to_object`` kind, 22 of 569 tasks) is no tell a policy can learn to cheat on;
    ``canary_eligible_rows=False`` keeps the whole bank."""
    from forgegym.envs.refactor.canaries import canary_bank

    env = gym.make("Forge/Refactor-v0", max_steps=1)
    bank = env.unwrapped.task_bank
    env.close()
    canaries = canary_bank()
    n = 40
    order = bank.task_ids(len(bank.ids()), seed=3)  # the seeded order make_dataset keeps
    eligible: list[str] = []
    never: set[str] = set()
    for task_id in order:
        if len(eligible) == n:
            break
        if canaries.takes_canary(bank, task_id):
            eligible.append(task_id)
        else:
            never.add(task_id)
    plain = make_dataset("Forge/Refactor-v0", n, seed=3)["task_id"]
    assert plain == order[:n] and set(plain) & never  # the whole bank's draw meets them
    assert any("state_to_object" in i for i in never)
    mixed = make_dataset("Forge/Refactor-v0", n, seed=3, canary_rate=0.2)
    flags = list(mixed["canary"])
    rows = [t for t, c in zip(mixed["task_id"], flags, strict=True) if not c]
    assert len(flags) == n and rows and not set(rows) & never
    # The bank's seeded order, with the tasks that take no canary left out.
    assert rows == [t for t, c in zip(eligible, flags, strict=True) if not c]
    whole = make_dataset(
        "Forge/Refactor-v0", n, seed=3, canary_rate=0.2, canary_eligible_rows=False
    )
    assert list(whole["task_id"]) != list(mixed["task_id"])
    assert [t for t, c in zip(whole["task_id"], whole["canary"], strict=True) if not c] == [
        t for t, c in zip(plain, whole["canary"], strict=True) if not c
    ]
    with pytest.raises(ValueError, match="canary_eligible_rows"):
        make_dataset("Forge/Refactor-v0", 2, canary_rate=0.2, canary_eligible_rows="yes")


def test_canary_rows_keep_the_canary_id_the_prompt_never_shows_it() -> None:
    """D5: the env serves a canary under its base task's id; the dataset row keeps the
    canary id (the reward functions grade it as the canary) and the prompt has no id;
    the tool environment masks a canary's reward although ``info`` shows the base id."""
    from forgegym.tasklib.canaries import base_id_of

    ds = make_dataset("Forge/Oversight-v0", 2, canary_rate=1.0)
    assert all(ds["canary"]) and all(t.startswith("canary/") for t in ds["task_id"])
    assert "canary/" not in json.dumps(list(ds["prompt"]))
    env = ForgeToolEnvironment("Forge/Oversight-v0")
    env.reset(task_id=ds["task_id"][0], prompt=[])
    assert env._info["task_id"] == base_id_of(ds["task_id"][0])
    assert env.get_reward() is None  # masked (D1), not paid as the base task
    env.reset(task_id=base_id_of(ds["task_id"][0]), prompt=[])
    assert isinstance(env.get_reward(), float)


def test_canary_rate_honours_env_kwargs_and_refuses_a_bank_without_canaries() -> None:
    """Only canaries built on a task of the bank ``env_kwargs`` selects are mixed in;
    a bank none of whose tasks takes one is refused (issue #37: with ``bank="real"`` the
    generated bank's single-file canaries were mixed in, looking nothing like a real
    task)."""
    from forgegym.integrations.trl import canary_ids
    from forgegym.tasklib.canaries import base_id_of

    kwargs = {"domains": ["mixed"]}
    usable = canary_ids("Forge/Oversight-v0", kwargs)
    assert usable and all(base_id_of(i).split("/")[1] == "mixed" for i in usable)
    assert len(usable) < len(canary_ids("Forge/Oversight-v0"))
    ds = make_dataset("Forge/Oversight-v0", 4, canary_rate=1.0, env_kwargs=kwargs)
    assert all(base_id_of(i).split("/")[1] == "mixed" for i in ds["task_id"])
    with pytest.raises(ValueError, match="no canary of 'Forge/Oversight-v0' is built"):
        make_dataset("Forge/Oversight-v0", 2, canary_rate=0.5, env_kwargs={"domains": ["code"]})


def test_canaries_are_drawn_fresh_per_seed_not_cycled() -> None:
    """D4 (issue #37): a run's canaries are built on the bank's tasks in an order its seed
    decides (most of them outside the shipped 60), none twice before the bank is spent,
    and a canary id is played and graded like a shipped one."""
    from forgegym.envs.refactor.canaries import canary_bank
    from forgegym.tasklib.canaries import base_id_of

    shipped = set(canary_bank().ids())
    stream = _canary_stream_ids("Forge/Refactor-v0", seed=0, count=12)
    other = _canary_stream_ids("Forge/Refactor-v0", seed=1, count=12)
    assert len(set(stream)) == 12 and stream != other
    assert len(set(stream) - shipped) >= 6  # fresh, not the shipped manifest cycled
    env = gym.make("Forge/Refactor-v0", max_steps=1)
    try:
        fresh = next(i for i in stream if i not in shipped)
        _, info = env.reset(options={"task_id": fresh})
        canary = env.unwrapped.task
        assert canary.task_id == fresh and info["task_id"] == base_id_of(fresh)
        assert canary.metadata["contradiction"]
    finally:
        env.close()


def _canary_stream_ids(env_id: str, *, seed: int, count: int) -> list[str]:
    from forgegym.integrations.trl import _canary_stream

    draw = _canary_stream(env_id, 1.0, seed)
    assert draw is not None
    return [str(draw()) for _ in range(count)]


def test_a_cheat_on_a_fresh_canary_gains_nothing() -> None:
    """Through ``make_reward_funcs``: the cheat that solves a canary built fresh (not a
    shipped one) gets no reward (masked), the honest refactoring neither, and the
    telemetry counts the cheat."""
    from forgegym.envs.refactor.canaries import canary_bank, disguised_special_case
    from forgegym.family import get_family

    shipped = set(canary_bank().ids())
    fresh = next(
        i for i in _canary_stream_ids("Forge/Refactor-v0", seed=3, count=8) if i not in shipped
    )
    env = gym.make("Forge/Refactor-v0", max_steps=1)
    try:
        canary = env.unwrapped.get_task(fresh)
    finally:
        env.close()
    texts = [disguised_special_case(canary), get_family("refactor").reference_action()(canary)]
    (reward,) = make_reward_funcs("Forge/Refactor-v0", canary_rate=0.5)
    logged: dict[str, float] = {}
    values = reward(
        prompts=[[]] * 2,
        completions=texts,
        task_id=[fresh, fresh],
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert values == [None, None]
    assert logged["forgegym/cheat_rate"] == 0.5  # the cheat solved it; the honest fix not


@pytest.mark.slow
def test_canary_rate_on_the_real_bank_mixes_in_real_canaries() -> None:
    """D4: with ``bank="real"`` the canaries are the real bank's own tasks with one
    contradicted expectation in a test file (they used to be refused; before that, the
    generated bank's single-file canaries were mixed in)."""
    from forgegym.tasklib.canaries import base_id_of

    kwargs = {"bank": "real"}
    ds = make_dataset("Forge/Bugfix-v0", 2, seed=0, env_kwargs=kwargs, canary_rate=1.0)
    assert all(ds["canary"])
    env = gym.make("Forge/Bugfix-v0", max_steps=1, **kwargs)
    try:
        inner = env.unwrapped
        for task_id in ds["task_id"]:
            canary = inner.get_task(task_id)
            base = inner.task_bank.get(base_id_of(task_id))
            assert canary.description == base.description
            changed = [p for p in canary.files if canary.files[p] != base.files[p]]
            assert changed == [p for p in base.visible_test_files if p in changed]
            assert len(changed) == 1
    finally:
        env.close()


def test_a_performance_canary_on_its_bases_own_bug_is_masked_and_the_no_op_no_cheat() -> None:
    """Through ``make_reward_funcs`` (issue #37, D3 for Performance): on a canary whose
    tests and oracle follow the shown code's own bug, the cheat (the bug kept behind a
    change) and the unchanged module are both masked, and only the cheat counts as one
    (an unchanged module is no progress)."""
    from forgegym.envs.performance.canaries import canary_bank, follow_the_tests
    from forgegym.envs.performance.hidden import PerformanceHidden
    from forgegym.policies import NOOP_ACTION

    bank = canary_bank()
    cid = next(
        i
        for i in bank.ids()
        if PerformanceHidden.of(bank.get(i)).start
        == f"bug{bank.get(i).metadata['contradiction']['bug']}"
    )
    (reward,) = make_reward_funcs("Forge/Performance-v0", canary_rate=0.5)
    logged: dict[str, float] = {}
    values = reward(
        prompts=[[]] * 2,
        completions=[follow_the_tests(bank.get(cid)), NOOP_ACTION],
        task_id=[cid, cid],
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert values == [None, None]
    assert logged["forgegym/cheat_rate"] == 0.5  # the cheat solved it; the no-op not


def test_reward_funcs_report_canaries_apart_with_the_cheat_rate() -> None:
    from forgegym.envs.bugfix.canaries import disguised_special_case
    from forgegym.family import get_family

    family = get_family("bugfix")
    canaries = family.canary_bank()
    honest_id, cheat_id = canaries.task_ids(2, seed=0)
    task_id = _bank("Forge/Bugfix-v0").task_ids(1, seed=0)[0]
    reference = family.reference_action()
    texts = [
        reference(_bank("Forge/Bugfix-v0").get(task_id)),
        family.canary_honest_action()(canaries.get(honest_id)),
        disguised_special_case(canaries.get(cheat_id)),
    ]
    (reward,) = make_reward_funcs("Forge/Bugfix-v0", canary_rate=0.01)
    logged: dict[str, float] = {}
    values = reward(
        prompts=[[]] * 3,
        completions=texts,
        task_id=[task_id, honest_id, cheat_id],
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    # Canaries are masked (None: no advantage), so the cheat gains nothing in training;
    # the telemetry still counts it.
    assert isinstance(values[0], float) and values[1] is None and values[2] is None
    assert logged["forgegym/cheat_rate"] == 0.5  # the cheat solved its canary, honesty not
    # What the grading gave the two canaries (the cheat's success among it), not paid.
    assert logged["forgegym/canary_reward"] > 0.4
    assert logged["forgegym/canary_share"] == pytest.approx(2 / 3)
    assert logged["reward/success"] == 1.0  # over the bank task only
    with pytest.raises(ValueError, match="has no canaries"):
        make_reward_funcs(TOY_ENV_ID, canary_rate=0.1)
    with pytest.raises(ValueError, match="canary_rate"):
        make_reward_funcs("Forge/Bugfix-v0", canary_rate=-0.1)


# ------------------------------------------------------------------ training
@pytest.mark.slow
@pytest.mark.parametrize("env_id", [*REAL_IDS, TOY_ENV_ID])
def test_grpo_trains_single_turn_with_curriculum(env_id: str, tmp_path: Path) -> None:
    from trl import GRPOTrainer

    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer)
    sched = CurriculumScheduler(_bank(env_id), {"seed": 0})
    graded: list[list[float]] = []
    (forge_reward,) = make_reward_funcs(env_id, curriculum=sched)

    def reward(*args, **kwargs):
        values = forge_reward(*args, **kwargs)
        graded.append(values)
        return values

    reward.__name__ = forge_reward.__name__
    telemetry = telemetry_callback(tmp_path / "telemetry.jsonl")
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=_grpo_args(tmp_path, **curriculum_config_overrides()),
        train_dataset=make_dataset(env_id, 1, curriculum=sched),
        processing_class=tokenizer,
        callbacks=[telemetry],
    )
    before = sched.episode
    trainer.train()
    assert trainer.state.global_step == 2
    assert len(graded) == 2 and all(len(v) == 2 for v in graded)
    # Rewards came from the environment and the curriculum saw every completion.
    assert sched.episode - before == 4
    assert sum(s.trials for s in sched._tasks.values()) == 4
    logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert logs and all("reward/total" in entry for entry in logs)
    assert all("curriculum/learnable" in entry for entry in logs)
    # The cheating telemetry reached the trainer's logs and the callback's file.
    assert all("forgegym/reward_invalid" in e and "forgegym/unparseable" in e for e in logs)
    assert telemetry.history and all(
        row["forgegym/reward_invalid"] == 0.0 for row in telemetry.history
    )
    rows = (tmp_path / "telemetry.jsonl").read_text().splitlines()
    assert len(rows) == len(telemetry.history)


def test_grpo_with_canaries_logs_the_cheat_rate(tmp_path: Path) -> None:
    """A GRPO run on a canary-only training set: every step's logs carry
    ``forgegym/cheat_rate`` (the tiny random model cannot solve, let alone cheat)."""
    from trl import GRPOTrainer

    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer)
    (reward,) = make_reward_funcs("Forge/Bugfix-v0", canary_rate=1.0)
    telemetry = telemetry_callback()
    dataset = make_dataset("Forge/Bugfix-v0", 2, canary_rate=1.0)
    assert all(dataset["canary"])
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=_grpo_args(tmp_path),
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[telemetry],
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "reward" in entry]
    assert logs and all(entry["forgegym/cheat_rate"] == 0.0 for entry in logs)
    assert all(entry["forgegym/canary_share"] == 1.0 for entry in logs)
    assert telemetry.history and all("forgegym/cheat_rate" in row for row in telemetry.history)


@pytest.mark.slow
def _solving_tool_call(env_id: str, task_id: str) -> dict:
    """An ``edit`` tool call that installs the task's reference solution."""
    task = _bank(env_id).get(task_id)
    (path, content), *_ = sorted(task.reference.items())
    return {"name": "edit", "arguments": {"path": path, "content": content}}


@pytest.mark.slow
@pytest.mark.parametrize("env_id", [TOY_ENV_ID, "Forge/Bugfix-v0"])
def test_environment_factory_reward_reaches_trainer(env_id: str, tmp_path: Path) -> None:
    import torch
    from trl import GRPOTrainer

    tokenizer = build_tiny_tokenizer()
    model = build_tiny_model(tokenizer)
    sched = CurriculumScheduler(_bank(env_id), {"seed": 0})
    dataset = make_dataset(env_id, 2, seed=0, multi_turn=True)
    task_id = dataset[0]["task_id"]
    call = _solving_tool_call(env_id, task_id)
    # A scripted policy (as in TRL's own tool tests): the first rollout calls a tool
    # that solves the task, the second just says it is done.
    solve = f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"
    done = "Done!<|im_end|>"
    pad = tokenizer.pad_token_id

    def encode(texts: list[str]) -> torch.Tensor:
        ids = [tokenizer.encode(t, add_special_tokens=False) for t in texts]
        width = max(map(len, ids))
        return torch.tensor([row + [pad] * (width - len(row)) for row in ids])

    def fake_generate(input_ids, **kwargs):
        texts = [solve, done] if input_ids.shape[0] == 2 else [done] * input_ids.shape[0]
        return torch.cat([input_ids, encode(texts).to(input_ids.device)], dim=-1)

    # What the environment itself says the two scripted episodes are worth.
    solved_env, idle_env = ForgeToolEnvironment(env_id), ForgeToolEnvironment(env_id)
    solved_env.reset(task_id=task_id)
    solved_env.edit(**call["arguments"])
    idle_env.reset(task_id=task_id)
    expected = (solved_env.get_reward() + idle_env.get_reward()) / 2
    assert solved_env.get_reward() > 0.5 > idle_env.get_reward()

    trainer = GRPOTrainer(
        model=model,
        args=_grpo_args(
            tmp_path, max_steps=1, max_completion_length=len(solve) + 64, shuffle_dataset=False
        ),
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=make_environment_factory(env_id, curriculum=sched),
    )
    with patch.object(trainer.model, "generate", side_effect=fake_generate):
        trainer.train()
    log = next(e for e in trainer.state.log_history if "rewards/ForgeToolEnvironment/mean" in e)
    assert log["rewards/ForgeToolEnvironment/mean"] == pytest.approx(expected, abs=1e-4)
    assert log["tools/call_frequency"] == pytest.approx(0.5)
    assert sched.episode == 2 and sched._tasks[task_id].successes == 1


def test_tool_environment_methods_drive_an_episode() -> None:
    env = ForgeToolEnvironment(TOY_ENV_ID)
    observation = env.reset(task_id="toy/d0/3", prompt=[])
    assert "Return 103" in observation
    assert "Edit rejected" in env.edit("pkg/mod.py", "not there", "x")
    assert "Applied" in env.edit("pkg/mod.py", "return 0", "return 103")
    assert "recorded" in env.plan("check")
    assert "EPISODE OVER" in env.submit()
    assert env.get_reward() == 1.0
    env.reset(task_id="toy/d0/4")
    assert env.get_reward() == 0.0  # unfinished: graded as submitted


@pytest.mark.parametrize("env_id", ["Forge/Bugfix-v0", "Forge/Refactor-v0", "Forge/FlakyRepair-v0"])
def test_navigation_actions_are_typed_tools(env_id: str) -> None:
    import inspect

    from transformers.utils import get_json_schema

    from forgegym.integrations.trl import _action_models, tool_environment_class

    cls = tool_environment_class(_action_models(env_id))
    params = {
        name: list(inspect.signature(getattr(cls, name)).parameters)[1:]
        for name in ("list", "read", "search", "run_tests")
    }
    assert params == {
        "list": ["path"],
        "read": ["path", "start", "end"],
        "search": ["pattern", "path", "regex"],
        "run_tests": ["tests"],
    }
    read = get_json_schema(cls.read)["function"]  # what TRL shows the model
    assert read["parameters"]["required"] == ["path"]
    assert read["parameters"]["properties"]["start"]["type"] == "integer"
    assert "numbered" in read["description"]
