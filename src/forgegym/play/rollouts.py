"""Play episodes: one loop for a single env or a vector env, for any batch policy.

A *batch policy* maps the observations and infos of the environments that need an
action to one action string each::

    BatchPolicy = Callable[[list[str], list[dict]], list[str]]

Adapters build one from a forgegym baseline policy (:func:`baseline_policy`), any
``policy(observation, info) -> str`` (:func:`batch_from_single`), a transformers
text-generation pipeline (:func:`transformers_policy`), a vLLM ``LLM``
(:func:`vllm_policy`) or an OpenAI-compatible client (:func:`openai_policy`).

:func:`collect_rollouts` is the one rollout loop: ``forgegym eval``
(:func:`forgegym.play.evaluation.evaluate`) calls it on one env, notebooks and trainers on a
Gymnasium vector env (sync or async, any autoreset mode). It returns one
:class:`~forgegym.play.results.Episode` per episode (the schema ``forgegym eval`` writes and
``forgegym plot episode`` reads), with per-step actions, rewards, info and the final
step's ``reward_breakdown``.

Which tasks a run plays (a decision)
------------------------------------
Episode ``k`` of a run is reset with seed ``seed + k`` (or ``seed[k]`` given a list of
per-episode seeds), whichever environment plays it, and the env picks its task from
that seed through the bank API every consumer uses (``reset(seed=...)`` ->
``TaskBank.sample(np_random, difficulty)``). So a run's tasks depend only on the seed,
the episode count and ``options``: not on the number of environments, sync vs async,
the autoreset mode or which episode finished first. ``forgegym eval --seed 0
--episodes 8`` plays the same tasks as ``collect_rollouts(gym.make_vec(id,
num_envs=4), ..., episodes=8, seed=0)``, and the baseline policies get the same rewards
(``noop``, ``reference``, ``partial``, ``hack:*`` are deterministic; a seeded ``random``
draws each decision from (seed, task id, step), not from the order of the calls).

To keep that promise the loop resets a finished env itself, with the next episode's
seed (``reset_mask``), instead of letting autoreset draw an unseeded task: in
next-step mode (Gymnasium's default) that also saves the autoreset step; in same-step
mode the vector env's own reset is discarded (one extra reset per episode). Up to
forgegym 0.1.0 the autoreset continued each env's generator, so episodes ``k >=
num_envs`` of a vector run depended on ``num_envs``; evaluation already used ``seed + k``
and its tasks and numbers are unchanged.

Example::

    envs = gym.make_vec("Forge/Bugfix-v0", num_envs=4, vectorization_mode="async")
    episodes = collect_rollouts(envs, baseline_policy("reference", "Forge/Bugfix-v0"),
                                episodes=16, seed=0)
    save_episodes(episodes, "runs/rollouts.json")   # forgegym plot episode reads it
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from forgegym.clients.chat import ChatClient
from forgegym.play.results import Episode, Results, Step, load_episodes, save_episodes

__all__ = [
    "BatchPolicy",
    "Episode",
    "Step",
    "Trajectory",
    "baseline_policy",
    "batch_from_single",
    "chat_messages",
    "collect_rollouts",
    "load_episodes",
    "load_trajectories",
    "openai_policy",
    "save_episodes",
    "save_trajectories",
    "to_eval_results",
    "transformers_policy",
    "unbatch_info",
    "vllm_policy",
]

BatchPolicy = Callable[[list[str], list[dict[str, Any]]], list[str]]

#: Info keys never copied into :attr:`Step.info`: large, and rebuildable from the task.
_DROPPED_INFO_KEYS = frozenset({"messages", "action_schema", "reward_breakdown"})

#: The name this module used for :class:`~forgegym.play.results.Episode` (same class).
Trajectory = Episode


# ------------------------------------------------------------------ vector infos
def _plain(value: Any) -> Any:
    """NumPy scalars and arrays to Python values (vector infos are NumPy arrays)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def unbatch_info(infos: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The info dict environment ``index`` returned, rebuilt from a vector ``infos``.

    Gymnasium stores each key as an array with a boolean mask ``_key`` (recursively for
    dict values); keys whose mask is false for ``index`` were not in that env's info.
    """
    out: dict[str, Any] = {}
    for key, value in infos.items():
        if key.startswith("_") and key[1:] in infos:
            continue
        mask = infos.get(f"_{key}")
        if mask is not None and not bool(mask[index]):
            continue
        if isinstance(value, Mapping):
            out[key] = unbatch_info(value, index)
        elif isinstance(value, np.ndarray):
            out[key] = _plain(value[index])
        else:  # pragma: no cover - gymnasium always batches into arrays
            out[key] = value
    return out


def _json_scalars(info: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: value
        for key, value in info.items()
        if key not in _DROPPED_INFO_KEYS and isinstance(value, (str, int, float, bool, type(None)))
    }


# ------------------------------------------------------------------ env backends
#: One env's outcome of a step: observation, reward, terminated, truncated, info.
_Outcome = tuple[str, float, bool, bool, dict[str, Any]]


class _SingleEnv:
    """A plain ``gymnasium.Env`` as one slot; the loop resets it itself."""

    mode = AutoresetMode.DISABLED
    num_envs = 1

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        self.env = env

    def reset(
        self, seeds: list[int | None], mask: list[bool] | None, options: dict[str, Any] | None
    ) -> dict[int, tuple[str, dict[str, Any]]]:
        observation, info = self.env.reset(seed=seeds[0], options=options)
        return {0: (observation, dict(info))}

    def step(self, actions: list[str]) -> list[_Outcome]:
        observation, reward, terminated, truncated, info = self.env.step(actions[0])
        return [(observation, float(reward), bool(terminated), bool(truncated), dict(info))]


class _VectorEnv:
    """A Gymnasium vector env as ``num_envs`` slots with per-env infos."""

    def __init__(self, envs: gym.vector.VectorEnv[Any, Any, Any]) -> None:
        self.envs = envs
        self.num_envs = envs.num_envs
        mode = envs.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        self.mode = mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)
        base = envs.unwrapped
        if (
            self.mode == AutoresetMode.NEXT_STEP
            and isinstance(base, gym.vector.AsyncVectorEnv)
            and not base.shared_memory
        ):
            # Gymnasium 1.4's async worker keeps its next-step autoreset flag across an
            # explicit reset without shared memory: the next action would be swallowed.
            raise ValueError(
                "envs: an AsyncVectorEnv with shared_memory=False in next-step autoreset "
                "mode cannot be reset per episode; use the default shared_memory=True or "
                "vector_kwargs={'autoreset_mode': AutoresetMode.DISABLED}"
            )

    def reset(
        self, seeds: list[int | None], mask: list[bool] | None, options: dict[str, Any] | None
    ) -> dict[int, tuple[str, dict[str, Any]]]:
        opts = dict(options) if options else None
        if mask is not None:
            opts = {**(opts or {}), "reset_mask": np.array(mask, dtype=np.bool_)}
        # Sync and async vector envs take one seed per env (the base class says int).
        observations, infos = self.envs.reset(seed=seeds, options=opts)  # type: ignore[arg-type]
        chosen = range(self.num_envs) if mask is None else [i for i, m in enumerate(mask) if m]
        return {i: (observations[i], unbatch_info(infos, i)) for i in chosen}

    def step(self, actions: list[str]) -> list[_Outcome]:
        observations, rewards, terminations, truncations, infos = self.envs.step(tuple(actions))
        outcomes: list[_Outcome] = []
        for i in range(self.num_envs):
            info = unbatch_info(infos, i)
            observation = observations[i]
            done = bool(terminations[i] or truncations[i])
            if done and self.mode == AutoresetMode.SAME_STEP:
                # The final step's obs/info come in final_obs/final_info; the rest is reset.
                observation = info.get("final_obs", observation)
                info = dict(info.get("final_info") or {})
            outcomes.append(
                (observation, float(rewards[i]), bool(terminations[i]), bool(truncations[i]), info)
            )
        return outcomes


def _env_id(envs: Any) -> str | None:
    spec = getattr(envs, "spec", None)
    get_attr = getattr(envs, "get_attr", None)  # sync/async vector envs and their wrappers
    if spec is None and get_attr is not None:
        try:
            spec = get_attr("spec")[0]
        except Exception:  # noqa: BLE001 - a hand-built vector env without specs
            spec = None
    return getattr(spec, "id", None)


def _policy_name(policy: Any) -> str:
    name = getattr(policy, "policy_name", None) or getattr(policy, "__name__", None)
    return str(name or type(policy).__name__)


def _episode_seeds(seed: int | Sequence[int | None] | None, episodes: int) -> list[int | None]:
    if seed is None:
        return [None] * episodes
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return [int(seed) + k for k in range(episodes)]
    if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
        seeds = list(seed)
        if len(seeds) != episodes or not all(
            s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool))
            for s in seeds
        ):
            raise ValueError(
                f"seed: a list gives one seed (int or None) per episode; got {len(seeds)} "
                f"entries for {episodes} episodes"
            )
        return [None if s is None else int(s) for s in seeds]
    raise ValueError(f"seed: expected an int, a list of per-episode seeds or None, got {seed!r}")


def _ask(policy: BatchPolicy, observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
    actions = list(policy(observations, infos))
    if len(actions) != len(observations):
        raise ValueError(
            f"policy: returned {len(actions)} actions for {len(observations)} observations"
        )
    # A model may return None for an empty completion; the env grades "" as unparseable.
    return ["" if a is None else a if isinstance(a, str) else str(a) for a in actions]


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# ------------------------------------------------------------------ the loop
def collect_rollouts(
    envs: gym.vector.VectorEnv[Any, Any, Any] | gym.Env[Any, Any],
    policy: BatchPolicy,
    *,
    episodes: int,
    seed: int | Sequence[int | None] | None = None,
    options: dict[str, Any] | None = None,
    keep_observations: bool = True,
    env_id: str | None = None,
    policy_name: str | None = None,
    max_vector_steps: int | None = None,
    on_episode: Callable[[Episode], None] | None = None,
    log: TextIO | None = None,
) -> list[Episode]:
    """Play exactly ``episodes`` episodes on ``envs`` and return them.

    Episode ``k`` is reset with seed ``seed + k`` on whichever environment is free
    (see "Which tasks a run plays" in the module docstring), so the tasks do not
    depend on ``envs``' size or mode. Environments with nothing left to play receive
    the empty action, whose outcomes are discarded, until every started episode is
    done; the policy is never asked to act for them or on an autoreset step.

    Args:
        envs: one forgegym env (``gymnasium.make``) or a vector env over text spaces
            (``gymnasium.make_vec``, any autoreset mode). Not closed here.
        policy: a batch policy, called once per (vector) step with the environments
            that need an action (:func:`batch_from_single` lifts a single-env policy).
        episodes: the number of complete episodes to return (>= 1).
        seed: an int (episode ``k`` gets ``seed + k``), one seed per episode, or
            ``None`` (unseeded: tasks drawn from the envs' own generators).
        options: passed to every reset (e.g. ``{"difficulty": 1}``).
        keep_observations: store each step's observation and the first and last ones
            (prompts can be large).
        env_id: recorded in each episode (default: the env's spec id).
        policy_name: recorded in each episode (default: the policy's ``policy_name``
            or ``__name__`` attribute, else its type's name).
        max_vector_steps: a safety bound on (vector) steps (default: unbounded).
        on_episode: called with each episode as it finishes (in finishing order).
        log: a stream for the ``[START]``/``[STEP]``/``[END]`` lines of each episode.

    Returns:
        The episodes, in the order they started (``episode.index == k``).

    Raises:
        ValueError: ``episodes`` < 1, a bad ``seed``, no id for the env, a policy that
            returns the wrong number of actions, or an env whose reset info has no
            ``task_id``.
        RuntimeError: ``max_vector_steps`` reached first.
    """
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
    seeds = _episode_seeds(seed, episodes)
    backend: _SingleEnv | _VectorEnv = (
        _VectorEnv(envs) if isinstance(envs, gym.vector.VectorEnv) else _SingleEnv(envs)
    )
    run_env_id = env_id or _env_id(envs)
    if run_env_id is None:
        raise ValueError("env_id: the env has no spec id to record; pass env_id=")
    run = _Run(
        backend,
        seeds,
        options=options,
        keep_observations=keep_observations,
        env_id=run_env_id,
        policy_name=policy_name or _policy_name(policy),
        on_episode=on_episode,
        log=log,
    )
    return run.play(policy, max_vector_steps)


class _Run:
    """One :func:`collect_rollouts` call: which episode each env plays, what it last
    saw, and the episodes finished so far (``None`` in a slot: the env is idle)."""

    def __init__(
        self,
        backend: _SingleEnv | _VectorEnv,
        seeds: list[int | None],
        *,
        options: dict[str, Any] | None,
        keep_observations: bool,
        env_id: str,
        policy_name: str,
        on_episode: Callable[[Episode], None] | None,
        log: TextIO | None,
    ) -> None:
        self.backend, self.seeds, self.options = backend, seeds, options
        self.keep_observations, self.env_id, self.policy_name = (
            keep_observations,
            env_id,
            policy_name,
        )
        self.on_episode, self.log = on_episode, log
        n = self.n = backend.num_envs
        self.slots: list[Episode | None] = [None] * n
        self.current_obs: list[str] = [""] * n
        self.current_info: list[dict[str, Any]] = [{} for _ in range(n)]
        self.finished: list[Episode] = []
        self.next_episode = 0

    def _print(self, line: str) -> None:
        if self.log is not None:
            print(line, file=self.log, flush=True)

    def begin(self, i: int, k: int, observation: str, info: dict[str, Any]) -> None:
        """Env ``i`` starts episode ``k`` from its reset ``observation`` and ``info``."""
        self.current_obs[i], self.current_info[i] = observation, info
        task_id = (self.options or {}).get("task_id") or info.get("task_id")  # as asked (D5)
        if task_id is None:
            raise ValueError(f"envs: reset info of env {i} has no 'task_id'")
        self.slots[i] = Episode(
            env_id=self.env_id,
            policy=self.policy_name,
            task_id=str(task_id),
            family=info.get("family"),
            difficulty=info.get("difficulty"),
            seed=self.seeds[k],
            index=k,
            env_index=i,
            initial_observation=observation if self.keep_observations else None,
            score=0.0,
            success=False,
        )
        self._print(f"[START] task={task_id} env={self.env_id} model={self.policy_name}")

    def record(self, i: int, action: str, outcome: _Outcome) -> bool:
        """Record env ``i``'s step; True when its episode (played or idle) ended."""
        observation, reward, terminated, truncated, info = outcome
        done = terminated or truncated
        episode = self.slots[i]
        if episode is None:  # idle: its outcomes belong to no requested episode
            return done
        step = Step(
            index=len(episode.steps) + 1,
            action=action,
            reward=reward,
            terminated=terminated,
            truncated=truncated,
            reward_breakdown=info.get("reward_breakdown"),
            info=_json_scalars(info),
            observation=self.current_obs[i] if self.keep_observations else None,
        )
        episode.steps.append(step)
        self.current_obs[i], self.current_info[i] = observation, info
        error = info.get("action_error")
        self._print(
            f"[STEP] step={step.index} action={_one_line(step.action)} "
            f"reward={reward:.2f} done={str(done).lower()} "
            f"error={_one_line(error) if error else 'null'}"
        )
        if not done:
            return False
        episode.final_observation = observation if self.keep_observations else None
        episode.score = float(info.get("score", 0.0))
        episode.success = bool(info.get("success", False))
        self.slots[i] = None
        self.finished.append(episode)
        self._print(
            f"[END] success={str(episode.success).lower()} steps={len(episode.steps)} "
            f"score={episode.score:.3f} "
            f"rewards={','.join(f'{s.reward:.2f}' for s in episode.steps)}"
        )
        if self.on_episode is not None:
            self.on_episode(episode)
        return True

    def refill(self, ended: list[int]) -> None:
        """Give the next episodes to the envs that just ended, in env order."""
        assigned: dict[int, int] = {}
        for i in ended:
            if self.next_episode < len(self.seeds):
                assigned[i] = self.next_episode
                self.next_episode += 1
        # A done env that stays idle resets itself, except with autoreset disabled,
        # where stepping it again is an error: reset it too (unseeded) while others play.
        idle = [i for i in ended if i not in assigned]
        playing = bool(assigned) or any(slot is not None for slot in self.slots)
        reset_idle = self.backend.mode == AutoresetMode.DISABLED and playing and bool(idle)
        mask = [i in assigned or (reset_idle and i in idle) for i in range(self.n)]
        if any(mask):
            seeds = [self.seeds[assigned[i]] if i in assigned else None for i in range(self.n)]
            fresh = self.backend.reset(seeds, mask, self.options)
            for i, k in assigned.items():
                self.begin(i, k, *fresh[i])

    def play(self, policy: BatchPolicy, max_vector_steps: int | None) -> list[Episode]:
        """Reset, then step every env until every requested episode is done."""
        n, episodes = self.n, len(self.seeds)
        first = min(n, episodes)
        started = self.backend.reset(
            [self.seeds[i] if i < first else None for i in range(n)], None, self.options
        )
        for i in range(first):
            self.begin(i, i, *started[i])
        self.next_episode = first
        vector_steps = 0
        while any(slot is not None for slot in self.slots):
            if max_vector_steps is not None and vector_steps >= max_vector_steps:
                raise RuntimeError(
                    f"max_vector_steps={max_vector_steps} reached with "
                    f"{len(self.finished)}/{episodes} episodes done"
                )
            acting = [i for i in range(n) if self.slots[i] is not None]
            replies = _ask(
                policy,
                [self.current_obs[i] for i in acting],
                [self.current_info[i] for i in acting],
            )
            actions = [""] * n
            for i, reply in zip(acting, replies, strict=True):
                actions[i] = reply
            outcomes = self.backend.step(actions)
            vector_steps += 1
            ended = [i for i, out in enumerate(outcomes) if self.record(i, actions[i], out)]
            self.refill(ended)
        return sorted(self.finished, key=lambda e: e.index)


# ------------------------------------------------------------------ persistence
def save_trajectories(trajectories: Sequence[Episode], path: str | Path) -> Path:
    """Write episodes as a results file (:func:`forgegym.play.results.save_episodes`)."""
    return save_episodes(trajectories, path)


def load_trajectories(path: str | Path) -> list[Episode]:
    """Read episodes from a results file, old trajectory lists included."""
    return load_episodes(path)


def to_eval_results(trajectories: Sequence[Episode], **metadata: Any) -> Results:
    """The episodes as a :class:`~forgegym.play.results.Results` (what ``forgegym eval``
    writes); kept from when rollouts had their own schema."""
    return Results(episodes=list(trajectories), metadata=dict(metadata))


# ------------------------------------------------------------------ adapters
def batch_from_single(policy: Callable[[str, dict[str, Any]], str]) -> BatchPolicy:
    """Lift a per-observation policy ``policy(observation, info) -> str`` to a batch one."""

    def act(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
        return [policy(o, i) for o, i in zip(observations, infos, strict=True)]

    act.policy_name = _policy_name(policy)  # type: ignore[attr-defined]
    return act


def baseline_policy(
    name: str, env: str | gym.Env[Any, Any], *, seed: int | None = None, **kwargs: Any
) -> BatchPolicy:
    """A forgegym baseline policy (``noop``, ``random``, ``reference``, ``hack:<name>``,
    ``llm``) as a batch policy.

    ``env`` is a forgegym env or an id; the policy only uses it to look tasks up by
    ``info["task_id"]`` (so one parent-side env serves every worker of an async vector
    env). An id builds a private env that lives as long as the policy.
    """
    from forgegym.policies import make

    single = gym.make(env) if isinstance(env, str) else env
    act = batch_from_single(make(name, single, seed=seed, **kwargs))
    act.env = single  # type: ignore[attr-defined]  # keep it alive with the policy
    act.policy_name = name  # type: ignore[attr-defined]  # what collect_rollouts records
    return act


def chat_messages(
    observation: str, info: Mapping[str, Any], *, history: bool = False
) -> list[dict[str, str]]:
    """Chat messages for one decision.

    With ``history`` the episode's full ``info["messages"]``; otherwise the env's system
    prompt and the observation alone (observations are self-contained prompts, and
    sending only them keeps the prompt length flat over an episode).
    """
    messages = list(info.get("messages") or [])
    if history and messages:
        return [dict(m) for m in messages]
    system = [dict(messages[0])] if messages and messages[0].get("role") == "system" else []
    return [*system, {"role": "user", "content": observation}]


def transformers_policy(
    pipeline: Any, *, history: bool = False, **generate_kwargs: Any
) -> BatchPolicy:
    """A batch policy from a ``transformers`` text-generation pipeline (chat input).

    The whole batch goes to the pipeline in one call; ``generate_kwargs`` (e.g.
    ``max_new_tokens``, ``do_sample``) are passed through.
    """
    kwargs = {"return_full_text": False, **generate_kwargs}

    def act(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
        chats = [
            chat_messages(o, i, history=history) for o, i in zip(observations, infos, strict=True)
        ]
        outputs = pipeline(chats, **kwargs)
        replies = []
        for output in outputs:
            first = output[0] if isinstance(output, list) else output
            text = first["generated_text"]
            if isinstance(text, list):  # return_full_text=True: the chat with the reply
                text = text[-1]["content"]
            replies.append(str(text))
        return replies

    return act


def vllm_policy(
    llm: Any, sampling_params: Any = None, *, chat: bool = True, history: bool = False
) -> BatchPolicy:
    """A batch policy from a vLLM ``LLM``: ``llm.chat`` (chat template) or, with
    ``chat=False``, ``llm.generate`` on the raw observations; one call per batch."""

    def act(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
        if chat:
            chats = [
                chat_messages(o, i, history=history)
                for o, i in zip(observations, infos, strict=True)
            ]
            outputs = llm.chat(chats, sampling_params)
        else:
            outputs = llm.generate(list(observations), sampling_params)
        return [output.outputs[0].text for output in outputs]

    return act


def openai_policy(
    client: Any, model: str, *, history: bool = False, max_workers: int = 8, **create_kwargs: Any
) -> BatchPolicy:
    """A batch policy from an OpenAI-compatible client (``openai.OpenAI(base_url=...)``).

    Requests for one batch run concurrently in ``max_workers`` threads (the chat API
    takes one conversation per request).
    """

    chat = ChatClient(
        model=model, sdk=client, temperature=None, max_tokens=None, extra=create_kwargs
    )

    def one(messages: list[dict[str, str]]) -> str:
        return chat.complete(messages)

    def act(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
        chats = [
            chat_messages(o, i, history=history) for o, i in zip(observations, infos, strict=True)
        ]
        with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(chats)))) as pool:
            return list(pool.map(one, chats))

    return act
