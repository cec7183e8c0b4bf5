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
Each rollout gets a :class:`ForgeToolEnvironment` whose public methods (``edit``,
``write_file``, ``run_tests``, ``lint``, ``plan``, ``submit``) are the tools and whose
``get_reward`` is the episode's reward; build its dataset with
``make_dataset(env_id, n, multi_turn=True)``.

Reward functions receive TRL's ``log_metric`` and log each reward-breakdown term (the
batch mean of ``RewardBreakdown.to_flat_dict()``) plus the curriculum's tier sizes.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from forgegym.curricula import CurriculumScheduler

__all__ = [
    "ForgeToolEnvironment",
    "TOOL_SYSTEM_PROMPT",
    "completion_text",
    "curriculum_config_overrides",
    "make_dataset",
    "make_environment_factory",
    "make_reward_funcs",
]

TOOL_SYSTEM_PROMPT = (
    "You are an expert software engineer working in a repository through tools. "
    "Use `edit` or `write_file` to change files, `run_tests` and `lint` to check your "
    "work, and `submit` when done. The task follows."
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
                task_id = info["task_id"]
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
        return {"prompt": prompt, "task_id": task_id, "env_id": self.env_id, "difficulty": level}

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

    Returns:
        A ``datasets.Dataset`` (no curriculum) or ``datasets.IterableDataset`` with
        columns ``prompt`` (conversational: system + user), ``task_id``, ``env_id``,
        ``difficulty``.
    """
    import datasets

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    cache = _PromptCache(env_id, env_kwargs, max_steps=8 if multi_turn else 1)
    if curriculum is not None:

        def generate() -> Iterator[dict[str, Any]]:
            while True:  # each row is drawn only when the trainer asks for it
                yield cache.row(curriculum.next_task(), multi_turn=multi_turn)

        return datasets.IterableDataset.from_generator(generate)
    env = _make_env(env_id, env_kwargs, 1)
    try:
        bank = env.unwrapped.task_bank
        ids = list(bank.task_ids(n, seed=seed, difficulty=difficulty))
    finally:
        env.close()
    rows = [cache.row(task_id, multi_turn=multi_turn) for task_id in ids]
    cache.close()
    return datasets.Dataset.from_list(rows)


def curriculum_config_overrides() -> dict[str, Any]:
    """``GRPOConfig`` settings a curriculum stream needs (no read-ahead shuffle)."""
    return {"shuffle_dataset": False}


def _success_of(env: Any, breakdown: Any) -> bool:
    judge = getattr(env, "_success", None)
    if callable(judge):
        return bool(judge(breakdown))
    return not breakdown.gates and breakdown.score >= 1.0 - 1e-9


def make_reward_funcs(
    env_id: str,
    curriculum: CurriculumScheduler | None = None,
    env_kwargs: dict[str, Any] | None = None,
    log_terms: bool = True,
) -> list[Callable[..., list[float]]]:
    """TRL reward functions grading each completion as a single-turn episode.

    The returned function ``forge_<family>_reward(prompts, completions, task_id, **kw)``
    groups completions by ``task_id`` and grades each group with one
    ``env.grade_completions`` call (the batch API over the runner pool). It reports
    every outcome to ``curriculum`` (one ``record`` per task per batch) and, when TRL
    passes ``log_metric``, logs the batch mean of every breakdown term, the success
    rate and the curriculum's tier sizes.
    """
    env = _make_env(env_id, env_kwargs, 1).unwrapped
    if not hasattr(env, "grade_completions"):
        raise ValueError(f"env_id: {env_id!r} has no grade_completions batch API")
    lock = threading.Lock()

    def reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        task_id: Sequence[str],
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        if len(task_id) != len(completions):
            raise ValueError("task_id: one task id per completion is required")
        texts = [completion_text(c) for c in completions]
        groups: dict[str, list[int]] = {}
        for index, tid in enumerate(task_id):
            groups.setdefault(tid, []).append(index)
        rewards = [0.0] * len(texts)
        flat: list[dict[str, float]] = []
        successes = [False] * len(texts)
        with lock:  # one env instance: serialise concurrent calls
            for tid, indices in groups.items():
                graded = env.grade_completions(tid, [texts[i] for i in indices])
                wins = 0
                for index, (value, breakdown) in zip(indices, graded, strict=True):
                    rewards[index] = float(value)
                    ok = _success_of(env, breakdown)
                    successes[index] = ok
                    wins += ok
                    flat.append(breakdown.to_flat_dict())
                if curriculum is not None:
                    curriculum.record(tid, wins, len(indices))
        if log_terms and log_metric is not None:
            keys = sorted({key for entry in flat for key in entry})
            for key in keys:
                log_metric(key, float(np.mean([entry.get(key, 0.0) for entry in flat])))
            log_metric("reward/success", float(np.mean(successes)))
            if curriculum is not None:
                for tier, size in curriculum.tier_sizes().items():
                    log_metric(f"curriculum/{tier}", float(size))
        return rewards

    reward.__name__ = f"forge_{getattr(env, 'family', 'env')}_reward"
    return [reward]


# --------------------------------------------------------------- environment_factory
class ForgeToolEnvironment:
    """One forgegym episode driven by TRL's tool-calling loop.

    TRL creates one instance per rollout (pooled), calls ``reset(**row)`` with the
    dataset row, exposes every public method below as a tool, and calls
    ``get_reward()`` once the rollout ends. Each tool runs one environment step and
    returns the step's feedback as text.

    Args:
        env_id: a registered forgegym id.
        env_kwargs: extra ``gym.make`` kwargs (``max_steps`` defaults to 8).
        curriculum: if given, each finished episode's success is recorded, and a row
            without ``task_id`` draws its task from the scheduler.
    """

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
        self._task_id = info["task_id"]
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
        if self._curriculum is not None and self._task_id is not None and "success" in info:
            self._curriculum.record(self._task_id, bool(info["success"]))

    # ------------------------------------------------------------------ tools
    def edit(self, path: str, search: str, replace: str) -> str:
        """Replace one exact occurrence of a text in an editable file.

        Args:
            path: workspace-relative path of an editable file.
            search: exact text to find; it must occur exactly once in the file.
            replace: the text to put in its place.

        Returns:
            What was applied or why the edit was rejected.
        """
        return self._step(
            {"action": "edit", "edits": [{"path": path, "search": search, "replace": replace}]}
        )

    def write_file(self, path: str, content: str) -> str:
        """Replace the whole content of an editable file.

        Args:
            path: workspace-relative path of an editable file.
            content: the new full content of the file.

        Returns:
            What was applied or why the edit was rejected.
        """
        return self._step({"action": "edit", "edits": [{"path": path, "content": content}]})

    def run_tests(self) -> str:
        """Run the visible tests on the current files.

        Returns:
            A per-test report: passed, failed (with the error) or not run.
        """
        return self._step({"action": "run_tests"})

    def lint(self) -> str:
        """Lint the editable files with ruff.

        Returns:
            The ruff findings, or a note that there are none.
        """
        return self._step({"action": "lint"})

    def plan(self, text: str) -> str:
        """Record a plan (graded only where it is grounded in the code).

        Args:
            text: the plan.

        Returns:
            A confirmation.
        """
        return self._step({"action": "plan", "text": text})

    def submit(
        self,
        category: str | None = None,
        location: str | None = None,
        confidence: float | None = None,
    ) -> str:
        """Submit the current files for final grading; ends the episode.

        Args:
            category: root-cause category (FlakyRepair only; omit elsewhere).
            location: "path::function" of the root cause (FlakyRepair only).
            confidence: confidence in the diagnosis, 0..1 (FlakyRepair only).

        Returns:
            The final grade and its breakdown.
        """
        action: dict[str, Any] = {"action": "submit"}
        if category:
            diagnosis: dict[str, Any] = {"category": category}
            if location:
                diagnosis["location"] = location
            if confidence is not None:
                diagnosis["confidence"] = min(max(float(confidence), 0.0), 1.0)
            action["diagnosis"] = diagnosis
        return self._step(action)

    def get_reward(self) -> float:
        """The episode's reward; an unfinished episode is graded as if submitted."""
        if not self._done and self._task_id is not None:
            self._step({"action": "submit"})
        return self._total

    def __del__(self) -> None:  # not a tool: TRL lists public functions only
        env = getattr(self, "_env", None)
        if env is not None:
            with contextlib.suppress(Exception):  # interpreter shutdown
                env.close()


def make_environment_factory(
    env_id: str,
    env_kwargs: dict[str, Any] | None = None,
    curriculum: CurriculumScheduler | None = None,
) -> Callable[[], ForgeToolEnvironment]:
    """A zero-argument factory for ``GRPOTrainer(environment_factory=...)``."""
    return partial(ForgeToolEnvironment, env_id, env_kwargs, curriculum)
