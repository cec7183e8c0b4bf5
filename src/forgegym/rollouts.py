"""Batched rollouts over a Gymnasium vector env, for any batch policy.

A *batch policy* maps the observations and infos of the environments that need an
action to one action string each::

    BatchPolicy = Callable[[list[str], list[dict]], list[str]]

Adapters build one from a forgegym baseline policy (:func:`baseline_policy`), a
transformers text-generation pipeline (:func:`transformers_policy`), a vLLM ``LLM``
(:func:`vllm_policy`) or an OpenAI-compatible client (:func:`openai_policy`).

:func:`collect_rollouts` steps the vector env until a target number of episodes is
complete and returns one :class:`Trajectory` per episode, with per-step rewards and the
final step's ``reward_breakdown``. It handles all three Gymnasium autoreset modes, so
the step after an episode ends (next-step autoreset, the default) is never recorded as
a step and the policy is never asked to act on it.

Example::

    envs = gym.make_vec("Forge/Bugfix-v0", num_envs=4, vectorization_mode="async")
    trajectories = collect_rollouts(envs, baseline_policy("reference", "Forge/Bugfix-v0"),
                                    episodes=16, seed=0)
    save_trajectories(trajectories, "runs/rollouts.json")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from pydantic import BaseModel, Field, TypeAdapter

from forgegym.llm import ChatClient

__all__ = [
    "BatchPolicy",
    "Step",
    "Trajectory",
    "baseline_policy",
    "batch_from_single",
    "chat_messages",
    "collect_rollouts",
    "load_trajectories",
    "openai_policy",
    "save_trajectories",
    "to_eval_results",
    "transformers_policy",
    "unbatch_info",
    "vllm_policy",
]

BatchPolicy = Callable[[list[str], list[dict[str, Any]]], list[str]]

#: Info keys never copied into :attr:`Step.info`: large, and rebuildable from the task.
_DROPPED_INFO_KEYS = frozenset({"messages", "action_schema", "reward_breakdown"})


class Step(BaseModel):
    """One environment step of an episode."""

    index: int = Field(description="1-based step number within the episode.")
    observation: str | None = Field(
        default=None, description="The observation the action answered (if kept)."
    )
    action: str
    reward: float
    terminated: bool = False
    truncated: bool = False
    reward_breakdown: dict[str, Any] | None = Field(
        default=None, description="info['reward_breakdown'] (final steps)."
    )
    info: dict[str, Any] = Field(
        default_factory=dict, description="The JSON-scalar entries of the step's info."
    )


class Trajectory(BaseModel):
    """One episode played in one slot of a vector env."""

    env_id: str | None = None
    policy: str | None = None
    env_index: int = Field(description="Which environment of the vector env played it.")
    episode: int = Field(description="Order in which the episode started (0-based).")
    task_id: str | None = None
    family: str | None = None
    difficulty: int | None = None
    initial_observation: str | None = None
    final_observation: str | None = None
    steps: list[Step] = Field(default_factory=list)
    score: float | None = None
    success: bool | None = None

    @property
    def done(self) -> bool:
        return bool(self.steps) and (self.steps[-1].terminated or self.steps[-1].truncated)

    @property
    def total_reward(self) -> float:
        return float(sum(step.reward for step in self.steps))

    @property
    def reward_breakdown(self) -> dict[str, Any] | None:
        """The final step's breakdown, if the env reported one."""
        return self.steps[-1].reward_breakdown if self.steps else None


_TRAJECTORIES = TypeAdapter(list[Trajectory])


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


# ------------------------------------------------------------------ collection
def _autoreset_mode(envs: gym.vector.VectorEnv) -> AutoresetMode:
    mode = envs.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    return mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)


def _env_id(envs: gym.vector.VectorEnv) -> str | None:
    spec = getattr(envs.unwrapped, "spec", None)
    return getattr(spec, "id", None)


def _ask(policy: BatchPolicy, observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
    actions = list(policy(observations, infos))
    if len(actions) != len(observations):
        raise ValueError(
            f"policy: returned {len(actions)} actions for {len(observations)} observations"
        )
    # A model may return None for an empty completion; the env grades "" as unparseable.
    return ["" if a is None else a if isinstance(a, str) else str(a) for a in actions]


def collect_rollouts(
    envs: gym.vector.VectorEnv,
    policy: BatchPolicy,
    *,
    episodes: int,
    seed: int | Sequence[int | None] | None = None,
    options: dict[str, Any] | None = None,
    keep_observations: bool = True,
    env_id: str | None = None,
    policy_name: str | None = None,
    max_vector_steps: int | None = None,
) -> list[Trajectory]:
    """Play exactly ``episodes`` episodes on ``envs`` and return their trajectories.

    The vector env is reset once (``seed``, ``options``); thereafter environments are
    reset by the vector env's autoreset. Only the first ``episodes`` episodes to
    *start* are played (not the first to finish, which would favour short episodes);
    environments with nothing left to play receive the empty action, whose outcomes are
    discarded, until every started episode is done.

    Args:
        envs: a Gymnasium vector env over text spaces (``gymnasium.make_vec``).
        policy: a batch policy, called once per vector step with the environments that
            need an action.
        episodes: the number of complete episodes to return (>= 1).
        seed: passed to ``envs.reset`` (an int seeds env ``i`` with ``seed + i``).
        options: passed to ``envs.reset`` (e.g. ``{"difficulty": 1}``).
        keep_observations: store each step's observation (prompts can be large).
        env_id: recorded in each trajectory (default: the vector env's spec id).
        policy_name: recorded in each trajectory.
        max_vector_steps: a safety bound on vector steps (default: unbounded).

    Returns:
        The trajectories, in the order their episodes started.
    """
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
    n = envs.num_envs
    mode = _autoreset_mode(envs)
    env_id = env_id or _env_id(envs)
    observations, infos = envs.reset(seed=seed, options=options)  # type: ignore[arg-type]

    slots: list[Trajectory | None] = [None] * n
    current_obs: list[str] = [""] * n
    current_info: list[dict[str, Any]] = [{} for _ in range(n)]
    # NEXT_STEP mode: the env ended last step, so this step is its reset, not a step.
    resetting = [False] * n
    finished: list[Trajectory] = []
    started = 0

    def start(i: int, observation: str, info: dict[str, Any]) -> None:
        nonlocal started
        current_obs[i], current_info[i] = observation, info
        if started >= episodes:
            slots[i] = None
            return
        slots[i] = Trajectory(
            env_id=env_id,
            policy=policy_name,
            env_index=i,
            episode=started,
            task_id=info.get("task_id"),
            family=info.get("family"),
            difficulty=info.get("difficulty"),
            initial_observation=observation if keep_observations else None,
        )
        started += 1

    for i in range(n):
        start(i, observations[i], unbatch_info(infos, i))

    vector_steps = 0
    while any(slot is not None for slot in slots) or any(resetting):
        if max_vector_steps is not None and vector_steps >= max_vector_steps:
            raise RuntimeError(
                f"max_vector_steps={max_vector_steps} reached with "
                f"{len(finished)}/{episodes} episodes done"
            )
        acting = [i for i in range(n) if slots[i] is not None and not resetting[i]]
        actions = [""] * n
        if acting:
            replies = _ask(
                policy, [current_obs[i] for i in acting], [current_info[i] for i in acting]
            )
            for i, reply in zip(acting, replies, strict=True):
                actions[i] = reply
        observations, rewards, terminations, truncations, infos = envs.step(tuple(actions))
        vector_steps += 1
        reset_mask = np.zeros(n, dtype=np.bool_)
        for i in range(n):
            info = unbatch_info(infos, i)
            if resetting[i]:
                resetting[i] = False
                start(i, observations[i], info)
                continue
            trajectory = slots[i]
            if trajectory is None:
                continue  # idle: its outcomes belong to no requested episode
            done = bool(terminations[i] or truncations[i])
            observation, reset_info = observations[i], info
            if done and mode == AutoresetMode.SAME_STEP:
                # The final step's obs/info come in final_obs/final_info; the rest is reset.
                observation = info.pop("final_obs", observation)
                reset_info, info = info, info.pop("final_info", {})
            trajectory.steps.append(
                Step(
                    index=len(trajectory.steps) + 1,
                    observation=current_obs[i] if keep_observations else None,
                    action=actions[i],
                    reward=float(rewards[i]),
                    terminated=bool(terminations[i]),
                    truncated=bool(truncations[i]),
                    reward_breakdown=info.get("reward_breakdown"),
                    info=_json_scalars(info),
                )
            )
            current_obs[i], current_info[i] = observation, info
            if not done:
                continue
            trajectory.final_observation = observation if keep_observations else None
            trajectory.score = info.get("score")
            trajectory.success = info.get("success")
            finished.append(trajectory)
            slots[i] = None
            if mode == AutoresetMode.NEXT_STEP:
                resetting[i] = started < episodes
            elif mode == AutoresetMode.SAME_STEP:
                start(i, observations[i], reset_info)
            else:
                reset_mask[i] = started < episodes
        if reset_mask.any():  # AutoresetMode.DISABLED: we reset finished envs ourselves
            observations, infos = envs.reset(options={**(options or {}), "reset_mask": reset_mask})
            for j in np.flatnonzero(reset_mask):
                start(int(j), observations[j], unbatch_info(infos, int(j)))
    return sorted(finished, key=lambda t: t.episode)


# ------------------------------------------------------------------ persistence
def save_trajectories(trajectories: Sequence[Trajectory], path: str | Path) -> Path:
    """Write trajectories as a JSON list (creating parent folders); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_TRAJECTORIES.dump_json(list(trajectories), indent=2))
    return path


def load_trajectories(path: str | Path) -> list[Trajectory]:
    """Read trajectories written by :func:`save_trajectories`."""
    return _TRAJECTORIES.validate_json(Path(path).read_bytes())


def to_eval_results(trajectories: Sequence[Trajectory], **metadata: Any) -> Any:
    """Convert trajectories to the :class:`forgegym.results.EvalResults` schema."""
    from forgegym.results import EvalEpisode, EvalResults, EvalStep

    return EvalResults(
        episodes=[
            EvalEpisode(
                env_id=t.env_id or "",
                policy=t.policy or "",
                task_id=t.task_id or "",
                family=t.family,
                difficulty=t.difficulty,
                steps=[
                    EvalStep(
                        reward=s.reward,
                        action=s.action,
                        reward_breakdown=s.reward_breakdown,
                        info=s.info,
                        terminated=s.terminated,
                        truncated=s.truncated,
                    )
                    for s in t.steps
                ],
                score=float(t.score or 0.0),
                success=bool(t.success),
            )
            for t in trajectories
        ],
        metadata=dict(metadata),
    )


# ------------------------------------------------------------------ adapters
def batch_from_single(policy: Callable[[str, dict[str, Any]], str]) -> BatchPolicy:
    """Lift a per-observation policy ``policy(observation, info) -> str`` to a batch one."""

    def act(observations: list[str], infos: list[dict[str, Any]]) -> list[str]:
        return [policy(o, i) for o, i in zip(observations, infos, strict=True)]

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
