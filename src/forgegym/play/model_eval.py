"""``forgegym eval --model``: a model behind an OpenAI-compatible endpoint, R runs per task.

The protocol (the seed's leaderboard rules, with intervals):

* tasks: episode ``k`` of an env is reset with seed ``seed + k`` (as every forgegym
  evaluation: the same tasks as ``forgegym eval --policy ...`` and as
  :func:`forgegym.play.rollouts.collect_rollouts` with that seed);
* runs: each task is played ``runs`` times; run ``r`` asks the endpoint for
  completion sample ``r`` of each prompt (:mod:`forgegym.clients.async_chat`), so runs are
  independent samples at the fixed temperature and a rerun is answered by the cache;
* episodes: multi-turn until the env ends them (``max_steps=1`` is single-shot); each
  turn sends the episode's chat history (``info["messages"]``) or, with
  ``history=False``, the system prompt and the current observation;
* concurrency: up to ``concurrency`` episodes in flight, each on its own env;
  requests overlap on the event loop under the client's own limit, while env calls
  (reset, step: grading) run in worker threads *one at a time*. Why one at a time:
  CPython 3.11's ``ast`` module keeps its recursion counter per interpreter, not per
  thread, so two threads parsing at once can fail with "SystemError: AST constructor
  recursion depth mismatch" (measured here: 1 run in 3 of Oversight and Refactor
  episodes stepped in parallel threads), and families parse submissions in the parent.
  A model's latency, not grading, dominates an LLM evaluation, and grading fans out
  over the sandbox pool inside each step anyway;
* the results file (:class:`~forgegym.play.results.Results`) holds every episode (policy
  = the model name, ``run`` = its run) and in ``metadata`` the model and sampling,
  the client's usage (requests, retries, 429s, cache hits, tokens, seconds), the wall
  time and the aggregate (:func:`forgegym.play.aggregate.summarise_results`).

A failure of the endpoint (after the client's retries) stops the evaluation: it is
not a score. :class:`ModelEvalError` carries the episodes that finished.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TextIO

import gymnasium as gym

from forgegym.clients.async_chat import AsyncChatClient, ChatError
from forgegym.play.aggregate import DEFAULT_WEIGHTS, summarise_results
from forgegym.play.results import Episode, Results, Step
from forgegym.play.rollouts import _json_scalars, chat_messages

__all__ = ["ModelEvalError", "evaluate_model", "evaluate_model_async"]


class ModelEvalError(ChatError):
    """The endpoint failed; ``results`` holds the episodes that finished before."""

    def __init__(self, message: str, results: Results) -> None:
        super().__init__(message)
        self.results = results


@dataclass
class _EnvPool:
    """Idle envs per id, made on demand (one per episode in flight)."""

    env_kwargs: Mapping[str, Any]
    idle: dict[str, list[gym.Env[Any, Any]]] = field(default_factory=dict)
    made: list[gym.Env[Any, Any]] = field(default_factory=list)
    levels: dict[str, list[int]] = field(default_factory=dict)

    def take(self, env_id: str) -> gym.Env[Any, Any]:
        """An idle env of ``env_id`` or a new one (called in a worker thread)."""
        stack = self.idle.setdefault(env_id, [])
        if stack:
            return stack.pop()
        env = gym.make(env_id, **dict(self.env_kwargs))
        self.made.append(env)
        base = env.unwrapped
        family = getattr(base, "family", env_id)
        bank = getattr(base, "task_bank", None)
        if bank is not None:
            self.levels[family] = [int(level) for level in bank.difficulty_levels]
        return env

    def give(self, env_id: str, env: gym.Env[Any, Any]) -> None:
        self.idle.setdefault(env_id, []).append(env)

    def close(self) -> None:
        for env in self.made:
            env.close()


#: Env calls of every evaluation in this process, one at a time (see the module docstring).
_ENV_LOCK = threading.Lock()


def _serially(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with _ENV_LOCK:
        return fn(*args, **kwargs)


async def _play(
    client: AsyncChatClient,
    pool: _EnvPool,
    executor: ThreadPoolExecutor,
    *,
    env_id: str,
    seed: int,
    run: int,
    index: int,
    history: bool,
    log: TextIO | None,
) -> Episode:
    loop = asyncio.get_running_loop()

    async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await loop.run_in_executor(executor, partial(_serially, fn, *args, **kwargs))

    env = await call(pool.take, env_id)
    try:
        observation, info = await call(env.reset, seed=seed)
        episode = Episode(
            env_id=env_id,
            policy=client.model,
            task_id=str(info["task_id"]),
            family=info.get("family"),
            difficulty=info.get("difficulty"),
            seed=seed,
            index=index,
            run=run,
            score=0.0,
            success=False,
        )
        if log is not None:
            print(f"[START] task={episode.task_id} run={run} model={client.model}", file=log)
        while True:
            completion = await client.complete(
                chat_messages(observation, info, history=history), sample=run
            )
            observation, reward, terminated, truncated, info = await call(env.step, completion.text)
            step = Step(
                index=len(episode.steps) + 1,
                action=completion.text,
                reward=float(reward),
                terminated=bool(terminated),
                truncated=bool(truncated),
                reward_breakdown=info.get("reward_breakdown"),
                info=_json_scalars(info),
            )
            episode.steps.append(step)
            if terminated or truncated:
                break
        episode.score = float(info.get("score", 0.0))
        episode.success = bool(info.get("success", False))
        if log is not None:
            print(
                f"[END] task={episode.task_id} run={run} success={str(episode.success).lower()} "
                f"steps={len(episode.steps)} score={episode.score:.3f}",
                file=log,
            )
        return episode
    finally:
        pool.give(env_id, env)


async def evaluate_model_async(
    client: AsyncChatClient,
    env_ids: Sequence[str],
    *,
    episodes: int = 5,
    runs: int = 1,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    concurrency: int | None = None,
    history: bool = True,
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    on_episode: Callable[[Episode], None] | None = None,
    log: TextIO | None = None,
) -> Results:
    """Play ``episodes`` tasks x ``runs`` runs of every id against ``client``'s model.

    Returns the results with their aggregate in ``metadata["aggregate"]``; raises
    :class:`ModelEvalError` (with the finished episodes) when the endpoint fails.
    """
    for name, value in (("episodes", episodes), ("runs", runs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {value!r}")
    if not env_ids:
        raise ValueError("env_ids: expected at least one environment id")
    width = concurrency or client.concurrency
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"concurrency: expected an integer >= 1, got {concurrency!r}")
    jobs = [
        (env_id, seed + k, r) for env_id in env_ids for k in range(episodes) for r in range(runs)
    ]
    pool = _EnvPool(env_kwargs=dict(env_kwargs or {}))
    slots = asyncio.Semaphore(width)
    finished: list[Episode] = []
    usage_before = client.usage.as_dict()
    started = time.perf_counter()

    async def job(index: int, env_id: str, task_seed: int, run: int) -> None:
        async with slots:
            episode = await _play(
                client,
                pool,
                executor,
                env_id=env_id,
                seed=task_seed,
                run=run,
                index=index,
                history=history,
                log=log,
            )
        finished.append(episode)
        if on_episode is not None:
            on_episode(episode)

    executor = ThreadPoolExecutor(max_workers=width, thread_name_prefix="forgegym-eval")
    error: BaseException | None = None
    try:
        tasks = [asyncio.create_task(job(i, *spec)) for i, spec in enumerate(jobs)]
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        error = next((t.exception() for t in done if t.exception() is not None), None)
    finally:
        executor.shutdown(wait=True)
        await asyncio.get_running_loop().run_in_executor(None, _serially, pool.close)
    wall = time.perf_counter() - started
    usage = {k: v - usage_before[k] for k, v in client.usage.as_dict().items()}
    results = Results(
        metadata={
            "command": "forgegym eval --model",
            "model": client.model,
            "base_url": client.base_url,
            "sampling": client.sampling,
            "env_ids": list(env_ids),
            "env_kwargs": dict(env_kwargs or {}),
            "episodes": episodes,
            "runs": runs,
            "seed": seed,
            "concurrency": width,
            "history": history,
            "usage": usage,
            "wall_seconds": wall,
            "levels": pool.levels,
        },
        episodes=sorted(finished, key=lambda e: e.index),
    )
    from forgegym.play.telemetry import episode_telemetry

    # The cheating telemetry per env, as `forgegym eval` reports it per policy.
    results.metadata["telemetry"] = {
        f"{env_id} {client.model}": episode_telemetry(played)
        for env_id in env_ids
        if (played := [e for e in results.episodes if e.env_id == env_id])
    }
    if error is not None:
        results.metadata["incomplete"] = str(error)
        if isinstance(error, ChatError):
            raise ModelEvalError(str(error), results) from error
        raise error
    summaries = summarise_results(results.episodes, weights=weights, levels_of=pool.levels)
    results.metadata["weights"] = list(weights)
    results.metadata["aggregate"] = {
        policy: summary.model_dump(mode="json") for policy, summary in summaries.items()
    }
    return results


def evaluate_model(client: AsyncChatClient, env_ids: Sequence[str], **kwargs: Any) -> Results:
    """:func:`evaluate_model_async` on a fresh event loop (closes the client's pool)."""

    async def run() -> Results:
        try:
            return await evaluate_model_async(client, env_ids, **kwargs)
        finally:
            await client.aclose()

    return asyncio.run(run())
