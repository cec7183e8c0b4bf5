"""Baseline policies: ``policy(observation: str, info: dict) -> str``.

``make(name, env)`` returns one of:

- ``noop``: submits without changing anything (the floor every hack must not beat);
- ``random``: seeded random actions, valid and malformed, for smoke tests;
- ``reference``: the task's own solution (what validation expects to score high);
- ``navigate``: the same fix, found by navigating (``list`` -> ``search`` -> ``read``
  -> ``edit`` -> ``run_tests`` -> ``submit``; code families, see
  :mod:`forgegym.policies.navigate`);
- ``partial``: the family's partial fix (between no-op and reference; the no-op on
  tasks the family has no partial for);
- ``hack:<name>``: a known reward hack the family registered (must score no more
  than ``noop``);
- ``llm``: any OpenAI-compatible chat endpoint (``API_BASE_URL``, ``MODEL_NAME``,
  ``API_KEY``).

Task validation (:mod:`~forgegym.policies.verify`) runs these policies on a task.

Layer: below ``envs`` (offline bank building validates its tasks with them) and above
``clients``; families are reached through the registry, never imported.
"""

from __future__ import annotations

import copy
import json
import warnings
import zlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from forgegym.core.env import ForgeEnv
from forgegym.policies.registry import (
    baselines_for,
    hacks_for,
    partial_action_for,
    reference_action_for,
)

__all__ = ["Policy", "available_policies", "make", "policy_names"]

Policy = Callable[[str, dict[str, Any]], str]

NOOP_ACTION = '```json\n{"action": "submit"}\n```'


def _forge_env(env: gym.Env[Any, Any]) -> ForgeEnv:
    base = env.unwrapped
    if not isinstance(base, ForgeEnv):
        raise ValueError(f"env: expected a forgegym environment, got {type(base).__name__}")
    return base


def policy_names(family: str) -> list[str]:
    """Names ``make`` accepts for an env of ``family`` (hack names depend on the family)."""
    scripted = ["noop", "random", "reference"]
    if _navigable(family):
        scripted.append("navigate")
    if partial_action_for(family) is not None:
        scripted.append("partial")
    return [
        *scripted,
        "llm",
        *(f"hack:{h}" for h in sorted(hacks_for(family))),
        *(f"baseline:{b}" for b in sorted(baselines_for(family))),
    ]


def _navigable(family: str) -> bool:
    """Whether ``family``'s actions include the navigation the ``navigate`` policy plays."""
    from forgegym.family import registered_family

    registered = registered_family(family)
    if registered is None:
        return False
    names = {m.model_fields["action"].annotation.__args__[0] for m in registered.actions()}  # type: ignore[union-attr]
    return {"list", "read", "search", "edit", "submit"} <= names


def available_policies(env: gym.Env[Any, Any]) -> list[str]:
    """Names ``make`` accepts for ``env`` (hack names depend on the family)."""
    return policy_names(_forge_env(env).family)


#: What the default reference action is for a task with no reference: submit only.
_SUBMIT_ONLY = '```json\n[{"action": "submit"}]\n```'


def _no_known_fix(env: ForgeEnv, task: Any) -> bool:
    """Whether ``task`` has no fix to play: no reference files, and the family's
    reference action is the default one (so it submits the files unchanged)."""
    return not task.reference and reference_action_for(env.family)(task) == _SUBMIT_ONLY


class _TaskScripted:
    """Plays one scripted action text per episode, computed from the current task.

    A task with no known fix (a repository task brings failing tests, not their fix)
    makes a fix-based policy submit nothing; it says so once per task with a
    ``UserWarning``, so its 0% is not read as a verdict on the task."""

    def __init__(
        self,
        env: ForgeEnv,
        action_for_task: Callable[[Any], str],
        name: str = "scripted",
        *,
        fix_based: bool = False,
    ) -> None:
        self._env = env
        self._action_for_task = action_for_task
        self._name = name
        self._fix_based = fix_based  # built from the task's known fix (reference, partial)
        self._checked: set[str] = set()

    def __call__(self, observation: str, info: dict[str, Any]) -> str:
        task = self._env.task_bank.get(info["task_id"])
        action = self._action_for_task(task)
        if self._fix_based and task.task_id not in self._checked:
            self._checked.add(task.task_id)  # once per task: the check plays the reference
            if not _no_known_fix(self._env, task):
                return action
            warnings.warn(
                f"{self._name}: task {task.task_id!r} has no known fix (a repository task "
                "brings its failing tests, not their fix), so this policy has no fix to "
                "play and submits the files unchanged; its score says nothing about the task",
                UserWarning,
                stacklevel=2,
            )
        return action


class _RandomPolicy:
    """Seeded random actions mixing valid actions, malformed JSON and noise.

    With a seed, each decision draws from a generator keyed by (seed, task id, step), so
    the actions do not depend on the order in which episodes are played (one env or a
    vector env of any size give the same episodes); without one, from a fresh generator.
    """

    def __init__(self, env: ForgeEnv, seed: int | None) -> None:
        self._env = env
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self._space = copy.deepcopy(env.action_space)  # seeded here, not the env's
        self._space.seed(seed)

    def _generator(self, info: dict[str, Any]) -> np.random.Generator:
        if self._seed is None:
            return self._rng
        task = zlib.crc32(str(info.get("task_id", "")).encode("utf-8", "surrogatepass"))
        return np.random.default_rng([self._seed, task, int(info.get("step") or 0)])

    def __call__(self, observation: str, info: dict[str, Any]) -> str:
        rng = self._generator(info)
        editable = list(info.get("editable_files") or [])
        choice = int(rng.integers(0, 6))
        if choice == 0:
            if self._seed is not None:
                self._space.seed(int(rng.integers(0, 2**31)))
            return self._space.sample()
        if choice == 1:
            return '{"action": "edit", "edits": ['  # truncated JSON
        if choice == 2 and editable:
            path = editable[int(rng.integers(0, len(editable)))]
            return json.dumps(
                {
                    "action": "edit",
                    "edits": [{"path": path, "search": "return", "replace": "return"}],
                }
            )
        if choice == 3:
            return json.dumps({"action": "run_tests"})
        if choice == 4:
            return json.dumps({"action": "plan", "text": "look at the failing test first"})
        return NOOP_ACTION


def make(name: str, env: gym.Env[Any, Any], *, seed: int | None = None, **kwargs: Any) -> Policy:
    """Build the baseline policy ``name`` for ``env``; raises ``ValueError`` naming ``name``."""
    base = _forge_env(env)
    if name == "noop":
        return lambda observation, info: NOOP_ACTION
    if name == "random":
        return _RandomPolicy(base, seed)
    if name == "reference":
        return _TaskScripted(base, reference_action_for(base.family), "reference", fix_based=True)
    if name == "navigate":
        from forgegym.policies.navigate import NavigatePolicy

        return NavigatePolicy(base)
    if name == "partial":
        partial = partial_action_for(base.family)
        if partial is None:
            raise ValueError(f"name: family {base.family!r} registers no partial policy")
        return _TaskScripted(
            base, lambda task: partial(task) or NOOP_ACTION, "partial", fix_based=True
        )
    if name.startswith("hack:"):
        hacks = hacks_for(base.family)
        hack = name.split(":", 1)[1]
        if hack not in hacks:
            raise ValueError(
                f"name: unknown hack {hack!r} for family {base.family!r}; known: {sorted(hacks)}"
            )
        return _TaskScripted(base, hacks[hack])
    if name.startswith("baseline:"):
        baselines = baselines_for(base.family)
        baseline = name.split(":", 1)[1]
        if baseline not in baselines:
            raise ValueError(
                f"name: unknown baseline {baseline!r} for family {base.family!r}; "
                f"known: {sorted(baselines)}"
            )
        return _TaskScripted(base, baselines[baseline])
    if name == "llm":
        from forgegym.policies.llm import LLMPolicy

        return LLMPolicy.from_env(**kwargs)
    raise ValueError(f"name: unknown policy {name!r}; choose from {available_policies(env)}")
