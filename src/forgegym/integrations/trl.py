"""TRL integration: datasets, reward functions and an ``environment_factory`` adapter.

Single-turn GRPO (one completion = one ``max_steps=1`` episode)::

    dataset = make_dataset("Forge/Bugfix-v0", 256)
    trainer = GRPOTrainer(model, reward_funcs=make_reward_funcs("Forge/Bugfix-v0"),
                          train_dataset=dataset, args=GRPOConfig(...))

With a curriculum, ``make_dataset(..., curriculum=scheduler)`` returns an *infinite*
``datasets.IterableDataset`` whose rows are drawn from the scheduler lazily, one at a
time, while the reward functions built with the same scheduler report every
completion's ``success`` back to it; so the curriculum adapts during
``trainer.train()``. We chose a lazy stream over a pre-sampled ``Dataset`` because a
pre-sampled one freezes the schedule before the first reward arrives. Consequences:
set ``GRPOConfig(max_steps=...)`` (the stream has no length) and
``shuffle_dataset=False`` (TRL's buffered shuffle would read ahead 1000 rows and so
delay the curriculum by 1000 draws; :func:`curriculum_config_overrides` gives the latter).

Multi-turn (TRL's tool loop): ``environment_factory=make_environment_factory(env_id)``.
Each rollout gets a :class:`ForgeToolEnvironment` whose public methods are the tools,
derived from the family's action models (one typed, documented method per action:
``edit``, ``run_tests``, ``lint``, ``plan``, ``review``, ``reflect``, ``submit`` for the
code families), and whose ``get_reward`` is the episode's reward; build its dataset with
``make_dataset(env_id, n, multi_turn=True)``.

Reward functions receive TRL's ``log_metric`` and log each reward-breakdown term (the
batch mean of ``RewardBreakdown.to_flat_dict()``) plus the curriculum's tier sizes.

Canaries (impossible variants of the family's tasks; any success on one is cheating):
``make_dataset(env_id, n, canary_rate=0.01)`` mixes them in, and the reward functions
(``make_reward_funcs(env_id, canary_rate=0.01)``) report them apart as
``forgegym/cheat_rate`` (docs/telemetry.md). A canary's reward is masked (``None``: TRL
gives the completion no advantage), so mixing canaries in never pays for the cheat they
measure (docs/design/006-canaries.md).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import GenericAlias, UnionType
from typing import Any, Literal, Union, get_args, get_origin

import gymnasium as gym
import numpy as np
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from forgegym.core.env import grade_items
from forgegym.curricula import CurriculumScheduler
from forgegym.integrations.reward_batch import score_batch
from forgegym.integrations.telemetry import telemetry_callback
from forgegym.tasklib.canaries import is_canary_id

__all__ = [
    "ForgeToolEnvironment",
    "canary_ids",
    "TOOL_SYSTEM_PROMPT",
    "completion_text",
    "curriculum_config_overrides",
    "make_dataset",
    "make_environment_factory",
    "make_reward_funcs",
    "telemetry_callback",
    "tool_environment_class",
]

TOOL_SYSTEM_PROMPT = (
    "You are an expert software engineer working on a task through tools. Call the "
    "tools to act (each returns the environment's feedback) and finish with the tool "
    "that ends the episode (`submit` where there is one). The task follows."
)


def _make_env(env_id: str, env_kwargs: dict[str, Any] | None, max_steps: int) -> Any:
    import forgegym  # noqa: F401  (registers the ids)

    kwargs = dict(env_kwargs or {})
    kwargs.setdefault("max_steps", max_steps)
    return gym.make(env_id, **kwargs)


def completion_text(completion: Any) -> str:
    """The assistant text of a TRL completion (a string or a list of message dicts)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    parts: list[str] = []
    for message in completion or []:
        if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
            content = message.get("content") or ""
            if isinstance(content, list):  # multimodal-style content blocks
                content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
            parts.append(str(content))
    return "\n".join(parts)


class _PromptCache:
    """Task id -> reset ``info["messages"]`` (prompts cost a workspace; reuse them)."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None, max_steps: int) -> None:
        self.env_id = env_id
        self.env_kwargs = env_kwargs
        self.max_steps = max_steps
        self._env: Any = None
        self._cache: dict[str, tuple[list[dict[str, str]], int]] = {}
        self._lock = threading.Lock()

    def row(
        self,
        task_id: str | None,
        *,
        seed: int | None = None,
        difficulty: int | None = None,
        multi_turn: bool = False,
    ) -> dict[str, Any]:
        with self._lock:
            if self._env is None:
                self._env = _make_env(self.env_id, self.env_kwargs, self.max_steps)
            if task_id is None or task_id not in self._cache:
                options: dict[str, Any] = {}
                if task_id is not None:
                    options["task_id"] = task_id
                elif difficulty is not None:
                    options["difficulty"] = difficulty
                _, info = self._env.reset(seed=seed, options=options)
                # The id asked for, not the served one: a canary is served under its base
                # task's id (so a policy cannot tell), and the row must grade the canary.
                task_id = task_id if task_id is not None else info["task_id"]
                self._cache[task_id] = (info["messages"], int(info["difficulty"]))
            messages, level = self._cache[task_id]
        if multi_turn:
            # The observation arrives through ForgeToolEnvironment.reset (appended by TRL).
            prompt = [
                {"role": "system", "content": TOOL_SYSTEM_PROMPT},
                {"role": "user", "content": ""},
            ]
        else:
            prompt = [{"role": m["role"], "content": m["content"]} for m in messages[:2]]
        return {
            "prompt": prompt,
            "task_id": task_id,
            "env_id": self.env_id,
            "difficulty": level,
            "canary": is_canary_id(task_id),
        }

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None


def make_dataset(
    env_id: str,
    n: int,
    curriculum: CurriculumScheduler | None = None,
    seed: int = 0,
    difficulty: int | None = None,
    env_kwargs: dict[str, Any] | None = None,
    *,
    multi_turn: bool = False,
    canary_rate: float = 0.0,
    canary_eligible_rows: bool = True,
) -> Any:
    """A GRPO training set for ``env_id``.

    Args:
        env_id: a registered forgegym id.
        n: number of rows (tasks) without a curriculum; ignored with one (the stream
            is infinite: bound training with ``GRPOConfig(max_steps=...)``).
        curriculum: a scheduler over this env's bank; rows are then drawn from it lazily.
        seed: selects the tasks (``task_ids(n, seed=seed, difficulty=...)``).
        difficulty: restrict to one level (no curriculum).
        env_kwargs: extra ``gym.make`` kwargs (``max_steps`` defaults to 1).
        multi_turn: rows for the ``environment_factory`` path: the prompt is a tool-use
            system message and an empty user message that ``reset`` fills in.
        canary_rate: the share of rows replaced by the family's canaries (impossible
            variants of its tasks, :mod:`forgegym.tasklib.canaries`): each row, with this
            probability (seeded by ``seed``), is a canary built fresh on the next task
            of a seeded order over the bank ``env_kwargs`` selects (``bank="real"``
            included: a contradicted expectation in a real project's test file; a
            restricted bank, e.g. Oversight's ``domains``, restricts them too); a bank
            none of whose tasks takes one is refused with a ``ValueError``. The reward
            functions recognise their ids, grade them, report them apart
            (``forgegym/cheat_rate``) and mask their reward.
        canary_eligible_rows: with ``canary_rate > 0``, draw the other rows too among
            the tasks that can carry a canary (by what a policy sees: the family's
            plan), so that "this task could never be a canary" is no tell a policy can
            learn to cheat on (design note 006, D7; the real bank: about 70% of its
            tasks; the generated banks 83-100%). ``False`` keeps every task of the bank
            and that tell. Under a curriculum a task that takes no canary is redrawn
            (up to 32 times).

    Returns:
        A ``datasets.Dataset`` (no curriculum) or ``datasets.IterableDataset`` with
        columns ``prompt`` (conversational: system + user), ``task_id``, ``env_id``,
        ``difficulty``, ``canary`` (whether the row is a canary).
    """
    import datasets

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not isinstance(canary_eligible_rows, bool):
        raise ValueError(f"canary_eligible_rows must be a bool, got {canary_eligible_rows!r}")
    canaries = _canary_stream(env_id, canary_rate, seed, env_kwargs)
    cache = _PromptCache(env_id, env_kwargs, max_steps=8 if multi_turn else 1)
    env = _make_env(env_id, env_kwargs, 1)
    try:
        bank = env.unwrapped.task_bank
    finally:
        env.close()
    canary_bank = _canary_bank(env_id) if canaries is not None and canary_eligible_rows else None
    if curriculum is not None:

        def next_row_task() -> str:
            task_id = curriculum.next_task()
            if canary_bank is not None:
                for _ in range(32):
                    if canary_bank.takes_canary(bank, task_id):
                        break
                    task_id = curriculum.next_task()
            return task_id

        def generate() -> Iterator[dict[str, Any]]:
            while True:  # each row is drawn only when the trainer asks for it
                task_id = canaries() if canaries is not None else None
                yield cache.row(task_id or next_row_task(), multi_turn=multi_turn)

        return datasets.IterableDataset.from_generator(generate)
    if canary_bank is None:
        ids = list(bank.task_ids(n, seed=seed, difficulty=difficulty))
    else:
        ids = canary_bank.eligible_task_ids(bank, n, seed=seed, difficulty=difficulty)
    if canaries is not None:
        ids = [canaries() or task_id for task_id in ids]
    rows = [cache.row(task_id, multi_turn=multi_turn) for task_id in ids]
    cache.close()
    return datasets.Dataset.from_list(rows)


def _canary_bank(env_id: str) -> Any:
    """The canary bank of ``env_id``'s family (``ValueError`` when it has none)."""
    import forgegym  # noqa: F401  (registers the ids)

    entry = gym.spec(env_id).entry_point
    cls = entry if not isinstance(entry, str) else _load_entry_point(entry)
    factory = getattr(cls, "canary_bank", None)  # the env owns its canaries
    bank = factory() if factory is not None else None
    if bank is None:
        raise ValueError(f"canary_rate: {env_id!r} has no canaries")
    return bank


def canary_ids(env_id: str, env_kwargs: dict[str, Any] | None = None) -> list[str]:
    """The *shipped* (validated) canary ids usable with ``gym.make(env_id,
    **env_kwargs)``: those whose base task is in the bank those kwargs select.
    ``ValueError`` when the family has no canaries or none of the shipped ones is built
    on that bank. ``canary_rate`` does not use this list: it builds canaries fresh on
    the selected bank (:func:`make_dataset`)."""
    from forgegym.tasklib.canaries import base_id_of

    bank = _canary_bank(env_id)
    env = _make_env(env_id, env_kwargs, 1)
    try:
        known = set(env.unwrapped.task_bank.ids())
    finally:
        env.close()
    ids = [str(i) for i in bank.ids() if base_id_of(str(i)) in known]
    if not ids:
        chosen = {k: v for k, v in (env_kwargs or {}).items() if k != "max_steps"}
        raise ValueError(
            f"canary_rate: no canary of {env_id!r} is built on the bank that "
            f"{chosen or 'the defaults'} select (the shipped ones are built on the default "
            "bank's tasks)"
        )
    return ids


def _canary_stream(
    env_id: str, rate: float, seed: int, env_kwargs: dict[str, Any] | None = None
) -> Callable[[], str | None] | None:
    """``None`` without canaries; else a draw per row: with probability ``rate`` a
    canary built fresh on the next task of the selected bank that takes one (the bank's
    ids in an order seeded by ``seed``: a run's canaries are drawn from the whole bank,
    the real one included, not cycled from a fixed set; design note 006, D4), else
    ``None``. ``ValueError`` when no task of the bank takes a canary."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.0 <= rate <= 1.0:
        raise ValueError(f"canary_rate must be a number in [0, 1], got {rate!r}")
    if rate == 0.0:
        return None
    canaries = _canary_bank(env_id)
    env = _make_env(env_id, env_kwargs, 1)
    try:
        task_bank = env.unwrapped.task_bank
    finally:
        env.close()
    fresh = canaries.fresh_ids(task_bank, seed)
    drawn: list[str] = [found] if (found := next(fresh, None)) is not None else []
    rng, position = np.random.default_rng([seed, 0xCA4A]), [0]
    if not drawn:
        chosen = {k: v for k, v in (env_kwargs or {}).items() if k != "max_steps"}
        raise ValueError(
            f"canary_rate: no canary of {env_id!r} is built on the bank that "
            f"{chosen or 'the defaults'} select (none of its tasks takes one); "
            "use canary_rate=0 here"
        )

    def draw() -> str | None:
        if rng.random() >= rate:
            return None
        more = next(fresh, None) if position[0] >= len(drawn) else None
        drawn.extend([more] if more is not None else [])
        position[0] += 1
        return drawn[(position[0] - 1) % len(drawn)]  # cycles only once the bank is spent

    return draw


def curriculum_config_overrides() -> dict[str, Any]:
    """``GRPOConfig`` settings a curriculum stream needs (no read-ahead shuffle)."""
    return {"shuffle_dataset": False}


def make_reward_funcs(
    env_id: str,
    curriculum: CurriculumScheduler | None = None,
    env_kwargs: dict[str, Any] | None = None,
    log_terms: bool = True,
    grading_processes: int | Literal["auto"] = 1,
    workers_per_process: int | None = None,
    canary_rate: float = 0.0,
) -> list[Callable[..., list[float | None]]]:
    """TRL reward functions grading each completion as a single-turn episode.

    ``grading_processes > 1`` grades each batch in that many trusted grading processes
    (:class:`~forgegym.integrations.sharded.ShardedGrading`: persistent, started and warmed in
    the background when this is called, tasks handed out in chunks; each has its own
    environment and sandbox pool of ``workers_per_process`` workers, default the usable
    cores divided among them), so the parent-side work (parsing, scans, lint,
    composing) runs on every core instead of one. ``"auto"`` is one grading process
    per usable core, or 1 on one core or when ``env_kwargs`` gives a ``runner`` or
    ``runner_workers`` (:func:`~forgegym.integrations.sharded.resolve_grading_processes`):
    the recommended setting for training on a multi-core machine. The default stays
    1 (everything in the caller's process: no spawned interpreters, ``env_kwargs``
    need not be picklable). Same rewards and breakdowns either way; the returned
    function's ``close()`` stops the processes (they also stop at exit).

    The returned function ``forge_<family>_reward(prompts, completions, task_id, **kw)``
    grades the whole batch with one call, :func:`~forgegym.core.env.grade_items` (the
    env's ``grade_batch``: identical completions graded once, the pool busy across
    tasks; per task with ``optimised_grading=False``), or the sharded processes' one
    call, which makes the same call in each. It reports
    every outcome to ``curriculum`` (one ``record`` per task per batch) and, when TRL
    passes ``log_metric``, logs the batch mean of every breakdown term, the success
    rate, the curriculum's tier sizes and the batch's telemetry
    (:func:`~forgegym.play.telemetry.batch_telemetry`: gate and hack rates, the
    unparseable share, the share of invalid rewards). A completion whose grading the
    machine failed (``RewardBreakdown.valid`` False after the runner's retry) gets
    ``None``, which TRL skips, never a 0 or -1.

    Canaries (rows whose ``task_id`` is a canary's, ``canary/...``: impossible variants
    that only a cheat solves) are graded but never rewarded: their reward is ``None``
    (masked: TRL gives the completion no advantage, so a cheat on a canary gains
    nothing, and neither does anything else on it). They are reported apart: left out
    of the logged term means, ``reward/success`` and the curriculum, the batch logs
    ``forgegym/cheat_rate`` (solved canaries / canaries), ``forgegym/canary_share`` and
    ``forgegym/canary_reward`` (the mean reward their grading gave, which was not paid).
    ``canary_rate`` is the share the training set mixes in (give the same to
    :func:`make_dataset`, which does the mixing): a positive rate checks here that the
    family has canaries on the bank ``env_kwargs`` selects and builds their bank once,
    before training starts.
    """
    from forgegym.integrations.sharded import ShardedGrading, resolve_grading_processes

    processes = resolve_grading_processes(grading_processes, env_kwargs)
    if isinstance(canary_rate, bool) or not isinstance(canary_rate, (int, float)):
        raise ValueError(f"canary_rate must be a number in [0, 1], got {canary_rate!r}")
    if not 0.0 <= canary_rate <= 1.0:
        raise ValueError(f"canary_rate must be a number in [0, 1], got {canary_rate!r}")
    if canary_rate > 0:
        _canary_bank(env_id)  # the family has canaries (built on demand on any bank)
    env = _make_env(env_id, env_kwargs, 1).unwrapped
    if not hasattr(env, "grade_completions") or not hasattr(env, "solved"):
        env.close()
        raise ValueError(f"env_id: {env_id!r} is not a forgegym environment")
    sharded = None
    if processes > 1:
        import math

        per = workers_per_process or math.ceil(len(os.sched_getaffinity(0)) / processes)
        sharded = ShardedGrading(env_id, env_kwargs, processes, per)
    lock = threading.Lock()
    seen_keys: set[str] = set()  # telemetry keys logged so far (zero thereafter, not missing)
    grade: Callable[[list[tuple[str, str]]], list[tuple[float, Any]]] = (
        partial(grade_items, env) if sharded is None else sharded.grade_batch
    )

    def reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        task_id: Sequence[str],
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        if len(task_id) != len(completions):
            raise ValueError("task_id: one task id per completion is required")
        items = [(tid, completion_text(c)) for tid, c in zip(task_id, completions, strict=True)]
        with lock:  # one env instance: serialise concurrent calls
            batch = score_batch(env, list(task_id), grade(items), curriculum)
        if log_metric is not None:
            batch.log(log_metric, seen_keys, curriculum, log_terms)
        return batch.rewards

    def close() -> None:
        if sharded is not None:
            sharded.close()

    reward.__name__ = f"forge_{getattr(env, 'family', 'env')}_reward"
    reward.close = close  # type: ignore[attr-defined]
    return [reward]


# --------------------------------------------------------------- environment_factory
_BASIC = (str, int, float, bool)


def _tool_type(annotation: Any) -> Any:
    """A type hint TRL's tool schema (``transformers.get_json_schema``) understands."""
    origin = get_origin(annotation)
    if annotation in _BASIC or annotation is Any:
        return annotation
    if origin is Literal:
        return annotation
    if origin in (Union, UnionType):
        inner = [_tool_type(a) for a in get_args(annotation) if a is not type(None)]
        if len(inner) == 1:
            return inner[0] | None if type(None) in get_args(annotation) else inner[0]
        return Any
    if origin in (list, tuple, Sequence):
        args = get_args(annotation)
        item = _tool_type(args[0]) if args and args[0] is not Ellipsis else Any
        return GenericAlias(list, (item,))
    if origin in (dict, Mapping):
        return dict[str, Any]
    return dict[str, Any]


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model an annotation holds (``M``, ``M | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, UnionType):
        models = [a for a in get_args(annotation) if a is not type(None)]
        if len(models) == 1:
            return _model_of(models[0])
    return None


def _list_item_model(annotation: Any) -> type[BaseModel] | None:
    if get_origin(annotation) is list:
        args = get_args(annotation)
        return _model_of(args[0]) if args else None
    return None


def _describe(info: FieldInfo, fallback: str) -> str:
    text = (info.description or fallback).strip().replace("\n", " ")
    return text or fallback


def _first_paragraph(doc: str | None) -> str:
    return inspect.cleandoc(doc or "").split("\n\n")[0].replace("\n", " ").strip()


@dataclass(frozen=True)
class _Param:
    name: str
    hint: Any
    required: bool
    default: Any
    description: str
    #: Where the value goes in the action: ``(field,)``, ``(field, subfield)`` of a
    #: nested model, or ``(field, "[]", subfield)`` of the one item of a list field.
    target: tuple[str, ...]


def _tool_params(model: type[BaseModel]) -> list[_Param]:
    """One tool parameter per action field. A ``list[Model]`` field is flattened into
    the fields of one item (one call = one item), and a nested model into its fields."""
    params: list[_Param] = []
    for name, info in model.model_fields.items():
        if name == "action":
            continue
        item = _list_item_model(info.annotation)
        nested = _model_of(info.annotation)
        if item is not None or nested is not None:
            sub = item or nested
            assert sub is not None
            outer_optional = not info.is_required()
            for sub_name, sub_info in sub.model_fields.items():
                required = sub_info.is_required() and not outer_optional
                hint = _tool_type(sub_info.annotation)
                if not required and type(None) not in get_args(hint):
                    hint = hint | None
                params.append(
                    _Param(
                        name=sub_name,
                        hint=hint,
                        required=required,
                        default=None,
                        description=_describe(sub_info, f"{name}.{sub_name}"),
                        target=(name, "[]", sub_name) if item is not None else (name, sub_name),
                    )
                )
            continue
        hint = _tool_type(info.annotation)
        required = info.is_required()
        if not required and type(None) not in get_args(hint) and hint is not Any:
            hint = hint | None
        params.append(
            _Param(
                name=name,
                hint=hint,
                required=required,
                default=None,
                description=_describe(info, name),
                target=(name,),
            )
        )
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ValueError(f"action_models: {model.__name__} has clashing tool parameters {names}")
    return params


def _action_payload(action: str, params: Sequence[_Param], values: dict[str, Any]) -> dict:
    payload: dict[str, Any] = {"action": action}
    for param in params:
        value = values.get(param.name)
        if value is None:
            continue
        if len(param.target) == 1:
            payload[param.target[0]] = value
        elif param.target[1] == "[]":
            items = payload.setdefault(param.target[0], [{}])
            items[0][param.target[2]] = value
        else:
            payload.setdefault(param.target[0], {})[param.target[1]] = value
    return payload


def _make_tool(model: type[BaseModel]) -> Callable[..., str]:
    """A typed, documented method that sends one ``model`` action as a step."""
    action = model.model_fields["action"].annotation.__args__[0]  # type: ignore[union-attr]
    params = _tool_params(model)

    ordered = [p for p in params if p.required] + [p for p in params if not p.required]

    def tool(self: ForgeToolEnvironment, *args: Any, **kwargs: Any) -> str:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            return f"TOOL ERROR: {exc}; nothing was executed."
        values = {k: v for k, v in bound.arguments.items() if k != "self"}
        return self._step(_action_payload(action, params, values))

    signature = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(
                p.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=p.hint,
                default=inspect.Parameter.empty if p.required else p.default,
            )
            for p in ordered
        ]
    )
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.hint for p in ordered} | {"return": str}
    summary = _first_paragraph(model.__dict__.get("__doc__")) or f"The `{action}` action."
    lines = [summary, ""]
    if ordered:
        lines.append("Args:")
        lines.extend(f"    {p.name}: {p.description}" for p in ordered)
        lines.append("")
    lines += ["Returns:", "    The environment's feedback on the action."]
    tool.__doc__ = "\n".join(lines)
    tool.__name__ = tool.__qualname__ = action
    return tool


_TOOL_CLASSES: dict[tuple[type[BaseModel], ...], type[ForgeToolEnvironment]] = {}
_TOOL_LOCK = threading.Lock()


def tool_environment_class(models: Sequence[type[BaseModel]]) -> type[ForgeToolEnvironment]:
    """The :class:`ForgeToolEnvironment` subclass whose tools are ``models``' actions
    (cached; named ``ForgeToolEnvironment`` so TRL's reward column keeps its name)."""
    key = tuple(models)
    with _TOOL_LOCK:
        if key not in _TOOL_CLASSES:
            methods: dict[str, Any] = {}
            for model in key:
                tool = _make_tool(model)
                if tool.__name__ in ("reset", "get_reward") or tool.__name__ in methods:
                    raise ValueError(f"action_models: action name {tool.__name__!r} is taken")
                methods[tool.__name__] = tool
            cls = type("ForgeToolEnvironment", (ForgeToolEnvironment,), methods)
            cls.__module__ = __name__
            _TOOL_CLASSES[key] = cls
        return _TOOL_CLASSES[key]


class ForgeToolEnvironment:
    """One forgegym episode driven by TRL's tool-calling loop.

    TRL creates one instance per rollout (pooled), calls ``reset(**row)`` with the
    dataset row, exposes every public method as a tool, and calls ``get_reward()``
    once the rollout ends. The tools are derived from the env's action models: one
    typed method per action (``edit``, ``run_tests``, ``lint``, ``plan``, ``review``,
    ``reflect``, ``submit`` for the code families; whatever a family defines), with
    the parameters and docstrings of the pydantic fields. A ``list[Model]`` field
    takes one item per call (``edit(path, search, replace)`` or
    ``edit(path, content=...)``) and a nested model is flattened into its fields
    (FlakyRepair's ``submit(category=..., location=..., confidence=...)``). Each tool
    runs one environment step and returns the step's feedback as text.

    ``ForgeToolEnvironment(env_id)`` returns an instance of the derived class for the
    env's family (:func:`tool_environment_class`).

    Args:
        env_id: a registered forgegym id.
        env_kwargs: extra ``gym.make`` kwargs (``max_steps`` defaults to 8).
        curriculum: if given, each finished episode's success is recorded, and a row
            without ``task_id`` draws its task from the scheduler.
    """

    def __new__(cls, env_id: str, *args: Any, **kwargs: Any) -> ForgeToolEnvironment:
        if cls is ForgeToolEnvironment:
            cls = tool_environment_class(_action_models(env_id))
        return super().__new__(cls)

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any] | None = None,
        curriculum: CurriculumScheduler | None = None,
    ) -> None:
        self._env_id = env_id
        self._env = _make_env(env_id, env_kwargs, 8)
        self._curriculum = curriculum
        self._task_id: str | None = None
        self._total = 0.0
        self._done = False
        self._info: dict[str, Any] = {}

    def reset(self, **row: Any) -> str | None:
        """Start an episode on ``row["task_id"]``; return the observation for the prompt."""
        task_id = row.get("task_id")
        if task_id is None and self._curriculum is not None:
            task_id = self._curriculum.next_task()
        options = {"task_id": task_id} if task_id else {}
        observation, info = self._env.reset(options=options)
        # The id asked for: a canary is served under its base task's id (D5).
        self._task_id = task_id or info["task_id"]
        self._total = 0.0
        self._done = False
        self._info = info
        return observation

    # ------------------------------------------------------------------ plumbing
    def _step(self, action: Any) -> str:
        if self._done:
            return "The episode is over; no further actions are possible."
        _, reward, terminated, truncated, info = self._env.step(json.dumps(action))
        self._total += float(reward)
        self._info = info
        feedback = info["messages"][-1]["content"] if info.get("messages") else ""
        if terminated or truncated:
            self._finish(info)
        return feedback

    def _finish(self, info: dict[str, Any]) -> None:
        self._done = True
        if (
            self._curriculum is not None
            and self._task_id is not None
            and not is_canary_id(self._task_id)  # canaries are not the curriculum's
            and "success" in info
        ):
            self._curriculum.record(self._task_id, bool(info["success"]))

    def get_reward(self) -> float | None:
        """The episode's reward; an unfinished episode is graded as if submitted. A
        canary's is ``None`` (masked: TRL gives it no advantage, so its cheat is never
        paid); its ``info["success"]`` still says whether it was cheated."""
        if not self._done and self._task_id is not None:
            self._finish_unsubmitted()
        if self._task_id is not None and is_canary_id(self._task_id):
            return None
        return self._total

    def _finish_unsubmitted(self) -> None:
        """Grade an episode the policy never ended: step until the budget truncates it
        (each remaining step a no-op ``submit`` where the env has one)."""
        models = self._env.unwrapped.action_set.models
        names = [m.model_fields["action"].annotation.__args__[0] for m in models]
        filler = {"action": "submit"} if "submit" in names else {"action": names[-1]}
        while not self._done:
            self._step(filler)

    def __del__(self) -> None:  # not a tool: TRL lists public functions only
        env = getattr(self, "_env", None)
        if env is not None:
            with contextlib.suppress(Exception):  # interpreter shutdown
                env.close()


def _action_models(env_id: str) -> tuple[type[BaseModel], ...]:
    """The action models of ``env_id``'s env class (its ``action_set``)."""
    import forgegym  # noqa: F401  (registers the ids)

    spec = gym.spec(env_id)
    entry = spec.entry_point
    cls = entry if not isinstance(entry, str) else _load_entry_point(entry)
    action_set = getattr(cls, "action_set", None)
    if action_set is None:
        raise ValueError(f"env_id: {env_id!r} has no action_set; not a forgegym environment")
    return tuple(action_set.models)


def _load_entry_point(entry: str) -> Any:
    from forgegym.family import resolve

    return resolve(entry)


def make_environment_factory(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    curriculum: CurriculumScheduler | None = None,
) -> Callable[[], ForgeToolEnvironment]:
    """A zero-argument factory for ``GRPOTrainer(environment_factory=...)``."""
    return partial(ForgeToolEnvironment, env_id, env_kwargs, curriculum)
