"""The SFT warm start: compact reference trajectories, and GRPO signal after training."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import forgegym  # noqa: F401
from forgegym.integrations.warmstart import (
    compact_action,
    minimal_edit,
    parses_as_action,
    reference_sft_dataset,
    tool_calls_for_action,
)

ENV_ID = "Forge/Bugfix-v0"


def _apply(original: str, edits: list[dict[str, str]]) -> str:
    text = original
    for edit in edits:
        if "content" in edit:
            text = edit["content"]
            continue
        assert text.count(edit["search"]) == 1, edit["search"]
        text = text.replace(edit["search"], edit["replace"], 1)
    return text


@pytest.mark.parametrize(
    ("original", "new"),
    [
        ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n"),  # one changed line
        ("x = 1\nx = 1\ny = 2\n", "x = 1\nx = 2\ny = 2\n"),  # repeated line: widened
        ("def f():\n    return 1\n", "def f():\n    return 1\n\n\ndef g():\n    return 2\n"),
        ("a\nb\nc\nd\n", "a\nc\nd\n"),  # deletion
        ("a\nb\n", "z\nb\ny\n"),  # two hunks
        ("only\n", "only\n"),  # nothing to do
        ("", "new file\n"),  # no lines to anchor on: whole content
    ],
)
def test_minimal_edit_reproduces_the_new_text(original: str, new: str) -> None:
    edits = minimal_edit("m.py", original, new)
    assert _apply(original, edits) == new
    if original == new:
        assert edits == []
    elif original:
        assert all("search" in e for e in edits)
        assert sum(len(e["search"]) for e in edits) < len(original) + 1


def test_compacted_reference_action_still_solves_the_task() -> None:
    env = gym.make(ENV_ID, max_steps=1)
    try:
        from forgegym import policies

        reference = policies.make("reference", env)
        observation, info = env.reset(seed=3)
        task = env.unwrapped.task_bank.get(info["task_id"])
        full = reference(observation, info)
        compact = compact_action(full, dict(task.files))
        assert len(compact) < len(full)  # whole-file edits became line edits
        assert '"search"' in compact and '"content"' not in compact
        assert parses_as_action(env, compact)
        _, _, terminated, _, step_info = env.step(compact)
        assert terminated and step_info["success"]
    finally:
        env.close()


def test_single_turn_dataset_matches_grpo_prompts() -> None:
    from forgegym.integrations.trl import make_dataset

    data = reference_sft_dataset(ENV_ID, 3, seed=5)
    grpo = make_dataset(ENV_ID, 3, seed=5)
    assert set(data.column_names) >= {"prompt", "completion", "task_id"}
    by_id = {row["task_id"]: row["prompt"] for row in grpo}
    env = gym.make(ENV_ID, max_steps=1)
    try:
        for row in data:
            assert row["prompt"] == by_id[row["task_id"]]
            assert [m["role"] for m in row["completion"]] == ["assistant"]
            assert parses_as_action(env, row["completion"][0]["content"])
    finally:
        env.close()


def test_multi_turn_dataset_holds_real_tool_calls() -> None:
    data = reference_sft_dataset(ENV_ID, 2, seed=5, multi_turn=True)
    row = data[0]
    tools = {t["function"]["name"] for t in json.loads(row["tools"])}
    calls = [m["tool_calls"][0]["function"] for m in row["messages"] if m.get("tool_calls")]
    assert calls and calls[-1]["name"] == "submit"
    assert {c["name"] for c in calls} <= tools
    for call in calls:  # Arrow did not pad one tool's arguments with another's fields
        assert None not in call["arguments"].values()
    # every call is answered by the tool's real output
    replies = [m for m in row["messages"] if m["role"] == "tool"]
    assert len(replies) == len(calls) and "EPISODE OVER" in replies[-1]["content"]


def test_tool_calls_for_unknown_action_is_a_value_error() -> None:
    from forgegym.integrations.trl import make_environment_factory

    tool_env = make_environment_factory(ENV_ID)()
    with pytest.raises(ValueError, match="action"):
        tool_calls_for_action(tool_env, {"action": "teleport"})


def test_protocol_tokens_shorten_actions_and_round_trip() -> None:
    """The fixed JSON text of actions becomes single tokens; text still round-trips and
    the chat format's special tokens keep their own ids."""
    from forgegym.integrations.tiny import build_tiny_tokenizer, protocol_pieces
    from forgegym.integrations.warmstart import tokenizer_texts

    single = reference_sft_dataset(ENV_ID, 2, seed=5)
    multi = reference_sft_dataset(ENV_ID, 2, seed=5, multi_turn=True)
    corpus, protocol = tokenizer_texts(single)
    assert protocol == [row["completion"][0]["content"] for row in single]
    plain = build_tiny_tokenizer(1024, corpus)
    fitted = build_tiny_tokenizer(1024, corpus, protocol)
    pieces = protocol_pieces(protocol)
    assert '", "search": "' in pieces and '", "replace": "' in pieces
    for text in protocol:
        ids = fitted(text)["input_ids"]
        assert len(ids) < 0.7 * len(plain(text)["input_ids"])
        assert fitted.decode(ids) == text
    # tool calls are rendered as the model writes them; <tool_call> stays one special token
    _, tool_protocol = tokenizer_texts(multi)
    assert all(t.startswith('<tool_call>\n{"name": "') for t in tool_protocol)
    tools = build_tiny_tokenizer(1024, tokenizer_texts(multi)[0], tool_protocol)
    ids = tools(tool_protocol[0])["input_ids"]
    assert ids[0] == tools.convert_tokens_to_ids("<tool_call>")
    assert tools.decode(ids) == tool_protocol[0]
    # a string value with an escaped quote does not end early
    assert protocol_pieces(['{"a": "x\\"y", "b": 1}'] * 2) == ['{"a": "', '", "b": 1}']


# The warm start a CPU test can afford: a small fixed set of tasks, many epochs, a
# tokenizer that knows the protocol's fixed JSON text, and sampling at 0.7.
WARM_TASKS = 4
WARM_SEED = 11
SAMPLE_TEMPERATURE = 0.7


def _warm_start(
    tmp_path: Path, data: Any, epochs: float, batch_size: int = 2
) -> tuple[Any, Any, list[float]]:
    from forgegym.integrations.tiny import build_tiny_model, build_tiny_tokenizer
    from forgegym.integrations.warmstart import sft_warm_start, tokenizer_texts

    corpus, protocol = tokenizer_texts(data)
    tokenizer = build_tiny_tokenizer(1024, corpus, protocol)
    model = build_tiny_model(tokenizer, hidden_size=128, num_heads=4, seed=0)
    model, history = sft_warm_start(
        model,
        tokenizer,
        data,
        output_dir=str(tmp_path / "sft"),
        epochs=epochs,
        learning_rate=3e-3,
        batch_size=batch_size,
        use_cpu=True,
    )
    return model, tokenizer, [e["loss"] for e in history if "loss" in e]


def _grpo(tmp_path: Path, model: Any, tokenizer: Any, rows: Any, **kwargs: Any) -> Any:
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(
        output_dir=str(tmp_path / "grpo"),
        max_steps=1,
        per_device_train_batch_size=8,
        num_generations=4,
        temperature=SAMPLE_TEMPERATURE,
        learning_rate=1e-5,
        beta=0.0,
        loss_type="dapo",
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        seed=0,
        **{k: v for k, v in kwargs.items() if k == "max_completion_length"},
    )
    trainer = GRPOTrainer(
        model=model,
        args=config,
        train_dataset=rows,
        processing_class=tokenizer,
        **{k: v for k, v in kwargs.items() if k != "max_completion_length"},
    )
    trainer.train()
    (log,) = [e for e in trainer.state.log_history if "grad_norm" in e]
    return log


@pytest.mark.slow
@pytest.mark.timeout(1800)  # ~40 s of CPU; wall time is whatever the shared machine gives
def test_warm_start_gives_grpo_a_signal(
    tmp_path: Path,
    one_thread: None,
    multi_turn_run: Callable[[], Any],  # started now: it trains beside this test
) -> None:
    """After a short SFT warm start of the tiny offline model on Bugfix's reference
    trajectories, >= 80% of sampled completions parse as actions, rewards differ within
    a prompt's group, and one GRPO step has a non-zero gradient norm."""
    import statistics

    from forgegym.integrations.learning import measure_stage
    from forgegym.integrations.trl import make_dataset, make_reward_funcs

    data = reference_sft_dataset(ENV_ID, WARM_TASKS, seed=WARM_SEED)
    assert len(data) >= 3
    model, tokenizer, losses = _warm_start(tmp_path, data, epochs=40)
    assert losses[-1] < losses[0] / 10  # it learned the trajectories
    env = gym.make(ENV_ID, max_steps=1)
    try:
        stage = measure_stage(
            "after SFT",
            model,
            tokenizer,
            env,
            list(data),
            num_samples=8,
            max_new_tokens=96,
            temperature=SAMPLE_TEMPERATURE,
        )
    finally:
        env.close()
    print(f"after SFT: {stage}")  # shown with -s: the numbers behind the thresholds
    assert stage.completions == 8 * len(data)
    assert stage.parse_rate >= 0.8, stage
    assert stage.groups_with_signal > 0 and stage.reward_std_within_group > 0, stage

    # one GRPO step on the same tasks: record the rewards TRL gets, per prompt group
    ids = set(data["task_id"])
    rows = make_dataset(ENV_ID, WARM_TASKS, seed=WARM_SEED).filter(lambda r: r["task_id"] in ids)
    (grade,) = make_reward_funcs(ENV_ID)
    seen: dict[str, list[float]] = {}

    def reward(*args: Any, task_id: list[str], **kwargs: Any) -> list[float]:
        values = grade(*args, task_id=task_id, **kwargs)
        for tid, value in zip(task_id, values, strict=True):
            seen.setdefault(tid, []).append(value)
        return values

    reward.__name__ = grade.__name__
    log = _grpo(tmp_path, model, tokenizer, rows, reward_funcs=[reward], max_completion_length=96)
    print(f"GRPO step: rewards per group {seen}; log {log}")
    assert sum(len(v) for v in seen.values()) == 8
    assert max(statistics.pstdev(v) for v in seen.values()) > 0, seen
    assert log["frac_reward_zero_std"] < 1.0
    assert log["grad_norm"] > 0.0, log


def _multi_turn_warm_start(tmp_path: Path) -> tuple[list[float], dict[str, Any]]:
    """A warm start on tool-call conversations, then one GRPO step of multi-turn
    rollouts (``environment_factory``): the SFT losses and the step's log."""
    from forgegym.integrations.trl import make_dataset, make_environment_factory

    # Conversations are ~2,000 tokens (tool schemas, the task, tool replies): 2 tasks
    data = reference_sft_dataset(ENV_ID, 2, seed=WARM_SEED, multi_turn=True)
    model, tokenizer, losses = _warm_start(tmp_path, data, epochs=40, batch_size=1)
    ids = set(data["task_id"])
    rows = make_dataset(ENV_ID, 2, seed=WARM_SEED, multi_turn=True).filter(
        lambda r: r["task_id"] in ids
    )
    log = _grpo(
        tmp_path,
        model,
        tokenizer,
        rows,
        environment_factory=make_environment_factory(ENV_ID),
        max_completion_length=192,
    )
    return losses, log


#: :func:`_multi_turn_warm_start` in a fresh interpreter: this folder's conftest sets
#: TRL up for a CPU as in the suite, and torch gets one thread (the ``one_thread``
#: fixture's setting).
_MULTI_TURN = """
import json, sys
from pathlib import Path
sys.path[:0] = [sys.argv[1]]
import conftest  # noqa: F401
import torch
torch.set_num_threads(1)
import test_warmstart
losses, log = test_warmstart._multi_turn_warm_start(Path(sys.argv[2]))
print("RESULT" + json.dumps({"losses": losses, "log": log}))
"""


@pytest.fixture(scope="module")
def multi_turn_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[], tuple[list[float], dict[str, Any]]]]:
    """:func:`_multi_turn_warm_start` in a fresh process started here; the function it
    yields waits for its losses and log. ``test_warm_start_gives_grpo_a_signal`` asks
    for it first, so the two trainings (each on one torch thread) use both cores at
    once instead of one after the other; ``test_multi_turn_warm_start_calls_tools``
    reads the result."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _MULTI_TURN,
            str(Path(__file__).resolve().parent),
            str(tmp_path_factory.mktemp("multi_turn")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Why one OpenMP thread: see the one_thread fixture (oversubscribed cores).
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )

    def finished() -> tuple[list[float], dict[str, Any]]:
        stdout, stderr = proc.communicate(timeout=1700)
        assert proc.returncode == 0, stderr[-3000:]
        line = [ln for ln in stdout.splitlines() if ln.startswith("RESULT")][-1]
        result = json.loads(line[len("RESULT") :])
        return result["losses"], result["log"]

    try:
        yield finished
    finally:
        if proc.poll() is None:  # not awaited (its test deselected): not left running
            proc.kill()
            proc.communicate()


@pytest.mark.slow
@pytest.mark.timeout(1800)  # ~1-2 min of CPU; wall time is whatever the shared machine gives
def test_multi_turn_warm_start_calls_tools(
    multi_turn_run: Callable[[], tuple[list[float], dict[str, Any]]],
) -> None:
    """After a warm start on tool-call conversations, GRPO's multi-turn rollouts
    (``environment_factory``) call the environment's tools."""
    losses, log = multi_turn_run()
    print(f"multi-turn SFT loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    assert losses[-1] < losses[0] / 5
    print(f"multi-turn GRPO step: {log}")
    assert log["tools/call_frequency"] > 0, log


def test_learning_report_round_trip_and_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from forgegym.integrations.learning import (
        GRPOStepLog,
        LearningReport,
        LearningStage,
        learning_figure,
        load_report,
        plot_learning,
    )

    stages = [
        LearningStage(
            name=name,
            completions=8,
            parse_rate=p,
            reward_mean=r,
            reward_std_within_group=s,
            groups_with_signal=g,
            success_rate=0.0,
        )
        for name, p, r, s, g in (
            ("initial", 0.0, -0.2, 0.0, 0.0),
            ("after SFT", 0.9, 0.1, 0.2, 1.0),
        )
    ]
    grpo = [
        GRPOStepLog(step=i, reward=0.1 * i, reward_std=0.2, grad_norm=0.5, loss=0.0)
        for i in (1, 2, 3)
    ]
    report = LearningReport(env_id=ENV_ID, stages=stages, grpo=grpo)
    path = tmp_path / "learning.json"
    path.write_text(json.dumps(report.model_dump(mode="json")), "utf-8")
    assert load_report(path) == report
    figure = learning_figure(path)
    ax_stages, ax_curve, ax_norm = figure.axes
    assert ax_stages.get_title() == "sampled completions, per stage"
    # one bar series per stage, four metrics each, with the stage's own values
    assert [c.get_label() for c in ax_stages.containers] == ["initial", "after SFT"]
    heights = [bar.get_height() for bar in ax_stages.containers[1]]
    assert heights == pytest.approx([0.9, 0.1, 0.2, 0.0])
    assert [line.get_label() for line in ax_curve.get_lines()] == ["mean reward", "reward std"]
    assert list(ax_curve.get_lines()[0].get_xdata()) == [1, 2, 3]
    assert list(ax_norm.get_lines()[0].get_ydata()) == [0.5, 0.5, 0.5]
    out = plot_learning(path, tmp_path / "learning.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the wrong file is refused, not drawn as empty panels
    other = tmp_path / "results.json"
    other.write_text(json.dumps({"kind": "forgegym.eval", "episodes": []}), "utf-8")
    with pytest.raises(ValueError, match="learning report"):
        load_report(other)
