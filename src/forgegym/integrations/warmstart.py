"""Supervised warm start: teach a model the action protocol before GRPO.

A randomly initialised (or small) model never writes a parseable action, so every
completion in a GRPO group scores the same, the group's reward standard deviation is
zero and GRPO has no gradient. The fix used in practice (DeepSeek-R1's "cold start",
TRL's SFT -> GRPO recipe) is a short supervised phase on good trajectories first.

Here the good trajectories are the family's own ``reference`` policy, rewritten into
the shortest form that does the same thing (an edit that replaces a whole file
becomes a ``search``/``replace`` of the changed lines), so a small model can learn it:

- :func:`reference_sft_dataset` builds a TRL SFT dataset from the reference policy:
  single-turn prompt/completion rows with exactly the prompts ``make_dataset`` gives
  GRPO, or multi-turn tool-calling conversations (``messages`` + ``tools``) for the
  ``environment_factory`` path.
- :func:`sft_warm_start` runs TRL's ``SFTTrainer`` on it (loss on the completion or
  assistant turns only) and returns the trained model.
- :func:`compact_action` / :func:`minimal_edit` do the rewriting, and every compacted
  action is checked to leave the workspace byte-identical to the original action.

Everything works with any local or hub model path too; nothing here downloads.
"""

from __future__ import annotations

import difflib
import inspect
import json
from collections.abc import Sequence
from typing import Any

__all__ = [
    "compact_action",
    "minimal_edit",
    "parses_as_action",
    "sample_completions",
    "reference_sft_dataset",
    "sft_warm_start",
    "tokenizer_texts",
    "tool_calls_for_action",
]


def _expand_to_unique(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """Widen ``text[lo:hi]`` a word at a time on each side until it occurs exactly once."""
    while True:
        span = text[lo:hi]
        if span and text.count(span) == 1:
            return lo, hi
        if lo == 0 and hi == len(text):
            return None
        # one word (or one separator) further on each side
        new_lo = lo - 1
        while new_lo > 0 and text[new_lo - 1].isalnum() and text[new_lo].isalnum():
            new_lo -= 1
        new_hi = hi + 1
        while new_hi < len(text) and text[new_hi - 1].isalnum() and text[new_hi].isalnum():
            new_hi += 1
        lo, hi = max(0, new_lo), min(len(text), new_hi)


def minimal_edit(path: str, original: str, new: str) -> list[dict[str, str]]:
    """The shortest ``search``/``replace`` edits turning ``original`` into ``new``.

    Each changed span (a character-level diff, so ``out[1]`` -> ``out[-1]`` is one
    small edit) becomes one edit whose ``search`` is the span widened a word at a time
    until it occurs exactly once in the current text (the action protocol requires a
    unique match). Applying the edits in order to ``original`` gives ``new`` exactly;
    when that cannot be done with ``search`` edits (e.g. ``original`` is empty) the
    result is one ``{"path", "content"}`` edit.
    """
    if original == new:
        return []
    if not original:
        return [{"path": path, "content": new}]
    matcher = difflib.SequenceMatcher(a=original, b=new, autojunk=False)
    # Merge changes separated by a short equal run: one edit reads better than several.
    spans: list[list[int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if spans and i1 - spans[-1][1] <= 3:
            spans[-1][1], spans[-1][3] = i2, j2
        else:
            spans.append([i1, i2, j1, j2])
    edits: list[dict[str, str]] = []
    current, shift = original, 0  # shift: len(current) - len(original) before this span
    for i1, i2, j1, j2 in spans:
        lo, hi = i1 + shift, i2 + shift
        widened = _expand_to_unique(current, lo, hi if hi > lo else lo + 1)
        if widened is None:
            return [{"path": path, "content": new}]
        wlo, whi = widened
        replace = current[wlo:lo] + new[j1:j2] + current[hi:whi]
        edits.append({"path": path, "search": current[wlo:whi], "replace": replace})
        current = current[:wlo] + replace + current[whi:]
        shift += (j2 - j1) - (i2 - i1)
    if current != new:  # widened spans overlapped a later change: fall back, still correct
        return [{"path": path, "content": new}]
    return edits


def _action_objects(text: str) -> list[dict[str, Any]] | None:
    """The action objects in ``text`` as plain dicts (None when there is no JSON action)."""
    from forgegym.core.actions import extract_json

    payload, error = extract_json(text)
    if error is not None:
        return None
    items = payload if isinstance(payload, list) else [payload]
    if not all(isinstance(item, dict) and isinstance(item.get("action"), str) for item in items):
        return None
    return [dict(item) for item in items]


def parses_as_action(env: Any, text: str) -> bool:
    """Whether ``text`` parses as actions of ``env`` (its own action models)."""
    return bool(env.unwrapped.action_set.parse(text).ok)


def compact_action(text: str, files: dict[str, str], *, final_step: bool = False) -> str:
    """Rewrite a policy's action text into its shortest equivalent fenced JSON.

    Whole-file ``content`` edits of files in ``files`` become minimal ``search``/
    ``replace`` edits; every other action is kept. With ``final_step`` (a single-turn
    episode, where any action is graded as the submission) a trailing ``submit`` after
    other actions is dropped. Text that does not parse is returned unchanged.
    """
    actions = _action_objects(text)
    if actions is None:
        return text
    if final_step and len(actions) > 1 and actions[-1] == {"action": "submit"}:
        actions = actions[:-1]
    out: list[dict[str, Any]] = []
    for action in actions:
        if action.get("action") == "edit":
            edits: list[dict[str, str]] = []
            for edit in action.get("edits", []):
                path, content = edit.get("path"), edit.get("content")
                if content is not None and path in files:
                    edits.extend(minimal_edit(path, files[path], content))
                else:
                    edits.append({k: v for k, v in edit.items() if v is not None})
            action = {**action, "edits": edits}
        out.append(action)
    payload: Any = out[0] if len(out) == 1 else out
    return "```json\n" + json.dumps(payload, ensure_ascii=False) + "\n```"


def tool_calls_for_action(tool_env: Any, action: dict[str, Any]) -> list[dict[str, Any]]:
    """TRL tool calls that perform ``action`` on an ``environment_factory`` instance.

    The tool is the method named after the action. Its parameters are the action's
    fields, with nested objects flattened into their fields and a list of objects
    (``edits``) sent one item per call, as :mod:`forgegym.integrations.trl` derives the
    tools from the action models. Raises ``ValueError`` when there is no such tool.
    """
    name = action.get("action")
    method = getattr(tool_env, name, None) if isinstance(name, str) else None
    if not isinstance(name, str) or name.startswith("_") or not callable(method):
        raise ValueError(f"action: the tool adapter has no {name!r} tool")
    params = inspect.signature(method).parameters
    scalars: dict[str, Any] = {}
    items: list[dict[str, Any]] = []
    for key, value in action.items():
        if key == "action":
            continue
        if key in params:
            scalars[key] = value
        elif isinstance(value, dict):
            scalars.update({k: v for k, v in value.items() if k in params})
        elif isinstance(value, list) and all(isinstance(v, dict) for v in value):
            items.extend({k: v for k, v in item.items() if k in params} for item in value)
    if not items:
        return [{"name": name, "arguments": scalars}]
    return [{"name": name, "arguments": {**scalars, **item}} for item in items]


def _tool_message(call: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}


def reference_sft_dataset(
    env_id: str,
    n: int,
    *,
    seed: int = 0,
    multi_turn: bool = False,
    env_kwargs: dict[str, Any] | None = None,
    difficulty: int | None = None,
) -> Any:
    """A TRL SFT dataset of the reference policy's trajectories on ``n`` tasks.

    Single-turn rows are ``{"prompt": [system, user], "completion": [assistant]}`` with
    the same prompts :func:`forgegym.integrations.trl.make_dataset` gives GRPO (same
    ``seed`` and ``difficulty`` -> same tasks), the completion being the compacted
    reference action. Multi-turn rows are ``{"messages": [...], "tools": [...]}``: the
    tool-use prompt, then assistant tool calls performing the reference actions, each
    answered by the tool's real output from a live episode, ending in ``submit``.

    Every trajectory is replayed on the environment and kept only if it succeeds, so
    the data never teaches a failing action.

    Raises:
        ValueError: ``n`` < 1, or no task's reference trajectory succeeded.
    """
    import datasets
    import gymnasium as gym

    import forgegym  # noqa: F401  (registers the ids)
    from forgegym import policies
    from forgegym.integrations.trl import make_dataset

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: must be an integer >= 1, got {n!r}")
    prompts = make_dataset(
        env_id, n, seed=seed, difficulty=difficulty, env_kwargs=env_kwargs, multi_turn=multi_turn
    )
    env = gym.make(env_id, **{**(env_kwargs or {}), "max_steps": 1})
    rows: list[dict[str, Any]] = []
    try:
        reference = policies.make("reference", env)
        for row in prompts:
            observation, info = env.reset(options={"task_id": row["task_id"]})
            task = env.unwrapped.task_bank.get(row["task_id"])  # type: ignore[attr-defined]
            action_text = compact_action(
                reference(observation, info), dict(task.files), final_step=not multi_turn
            )
            if not multi_turn:
                _, _, _, _, step_info = env.step(action_text)
                if step_info.get("success"):
                    rows.append(
                        {
                            "prompt": row["prompt"],
                            "completion": [{"role": "assistant", "content": action_text}],
                            "task_id": row["task_id"],
                        }
                    )
                continue
            conversation = _tool_trajectory(env_id, env_kwargs, row, action_text)
            if conversation is not None:
                rows.append(conversation)
    finally:
        env.close()
    if not rows:
        raise ValueError(f"env_id: no reference trajectory of {env_id!r} succeeded on {n} tasks")
    # Tool-call arguments differ per tool: stored as JSON so Arrow does not merge them into
    # one struct padded with nulls (``submit(path=None, ...)``).
    return datasets.Dataset.from_list(rows, on_mixed_types="use_json" if multi_turn else None)


def _tool_trajectory(
    env_id: str, env_kwargs: dict[str, Any] | None, row: dict[str, Any], action_text: str
) -> dict[str, Any] | None:
    """Replay ``action_text`` through the tool adapter; the conversation if it succeeds."""
    from transformers.utils import get_json_schema

    from forgegym.integrations.trl import make_environment_factory

    actions = _action_objects(action_text)
    if actions is None:
        return None
    if not any(a["action"] == "submit" for a in actions):
        actions.append({"action": "submit"})
    factory = make_environment_factory(env_id, env_kwargs=env_kwargs)
    tool_env = factory()
    try:
        first = tool_env.reset(**row)
        messages = [dict(m) for m in row["prompt"]]
        if first:  # the adapter fills the (empty) user turn with the observation
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + first}
        tool_names: set[str] = set()
        for action in actions:
            for call in tool_calls_for_action(tool_env, action):
                output = getattr(tool_env, call["name"])(**call["arguments"])
                tool_names.add(call["name"])
                messages.append(
                    {"role": "assistant", "content": "", "tool_calls": [_tool_message(call)]}
                )
                messages.append({"role": "tool", "name": call["name"], "content": str(output)})
        reward = tool_env.get_reward()  # None for a canary: never a warm-start example
        if reward is None or reward <= 0.5:
            return None
        tools = [
            get_json_schema(getattr(tool_env, name))
            for name in dir(tool_env)
            if not name.startswith("_")
            and name not in {"reset", "get_reward"}
            and callable(getattr(tool_env, name))
        ]
        return {
            "messages": messages,
            "tools": json.dumps(tools),
            "task_id": row["task_id"],
        }
    finally:
        close = getattr(tool_env, "close", None)
        if callable(close):
            close()


def tokenizer_texts(dataset: Any) -> tuple[list[str], list[str]]:
    """``(corpus, protocol)`` of a warm-start dataset, for fitting a tokenizer.

    ``corpus`` is every message's text (and the tool schemas the chat template renders
    into the system turn); ``protocol`` the assistant's action texts as the
    model writes them (single-turn completions; tool calls rendered as the Qwen chat
    template does, ``<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>``).
    See :func:`forgegym.integrations.tiny.build_tiny_tokenizer`.
    """
    corpus: list[str] = []
    protocol: list[str] = []
    for row in dataset:
        tools = row.get("tools")
        if tools:
            schemas = json.loads(tools) if isinstance(tools, str) else tools
            corpus.extend(json.dumps(schema, ensure_ascii=False) for schema in schemas)
        for message in row.get("prompt") or []:
            corpus.append(str(message.get("content") or ""))
        for message in [*(row.get("completion") or []), *(row.get("messages") or [])]:
            text = str(message.get("content") or "")
            corpus.append(text)
            if message.get("role") != "assistant":
                continue
            if text:
                protocol.append(text)
            for call in message.get("tool_calls") or []:
                function = call.get("function", call)
                arguments = function.get("arguments") or {}
                if isinstance(arguments, str):
                    arguments = json.loads(arguments)
                rendered = json.dumps(
                    {"name": function.get("name"), "arguments": arguments}, ensure_ascii=False
                )
                protocol.append(f"<tool_call>\n{rendered}\n</tool_call>")
                corpus.append(rendered)
    return corpus, protocol


def sft_warm_start(
    model: Any,
    tokenizer: Any,
    dataset: Any,
    *,
    output_dir: str,
    epochs: float = 3.0,
    learning_rate: float = 2e-3,
    batch_size: int = 4,
    max_length: int = 4096,
    seed: int = 0,
    use_cpu: bool | None = None,
) -> tuple[Any, list[dict[str, float]]]:
    """Fine-tune ``model`` on ``dataset`` with TRL's ``SFTTrainer``.

    Loss is on the completions (prompt/completion rows) or the assistant turns
    (conversations) only. Returns ``(model, log_history)``. ``use_cpu`` defaults to
    "no CUDA GPU".
    """
    import torch
    from trl import SFTConfig, SFTTrainer

    if use_cpu is None:
        use_cpu = not torch.cuda.is_available()
    if use_cpu:  # TRL's Triton LM-head kernel only runs interpreted (slowly) on a CPU
        from forgegym.integrations.cpu_kernels import install_cpu_lm_head

        install_cpu_lm_head()
    conversational_messages = "messages" in dataset.column_names
    config = SFTConfig(
        output_dir=output_dir,
        num_train_epochs=epochs,
        learning_rate=learning_rate,
        per_device_train_batch_size=batch_size,
        max_length=max_length,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=seed,
        use_cpu=use_cpu,
        bf16=False,
        gradient_checkpointing=False,
        assistant_only_loss=conversational_messages,
        lr_scheduler_type="cosine",
        warmup_steps=0.05,
    )
    trainer = SFTTrainer(
        model=model,
        args=config,
        train_dataset=dataset.remove_columns(
            [c for c in ("task_id",) if c in dataset.column_names]
        ),
        processing_class=tokenizer,
    )
    trainer.train()
    return trainer.model, list(trainer.state.log_history)


def sample_completions(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[list[dict[str, str]]],
    *,
    num_samples: int = 4,
    max_new_tokens: int = 128,
    temperature: float = 1.0,
    seed: int = 0,
) -> list[list[str]]:
    """``num_samples`` sampled completions per conversational prompt (the GRPO setting)."""
    import torch

    torch.manual_seed(seed)
    model.eval()
    out: list[list[str]] = []
    device = next(model.parameters()).device
    for prompt in prompts:
        text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        encoded = tokenizer(text, return_tensors="pt").to(device)
        with torch.no_grad():
            generated = model.generate(
                **encoded,
                do_sample=True,
                temperature=temperature,
                top_p=1.0,
                max_new_tokens=max_new_tokens,
                num_return_sequences=num_samples,
                pad_token_id=tokenizer.pad_token_id,
            )
        start = encoded["input_ids"].shape[1]
        out.append([tokenizer.decode(seq[start:], skip_special_tokens=True) for seq in generated])
    return out
