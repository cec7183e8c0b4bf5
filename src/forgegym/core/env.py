"""``ForgeEnv``: the episode loop and the info contract shared by every family.

Families subclass :class:`ForgeEnv` (or :class:`~forgegym.envs.code_env.CodeEnv` for
code tasks) and implement four hooks: ``_begin_episode``, ``_execute``, ``_grade`` and
``_render_observation``. The base class owns everything the contract promises:
parsing never raises, format penalties, step budget and truncation, determinism
through ``self.np_random``, and the ``info`` keys trainers rely on.

The reward contract (README, "Rewards"): a step's reward is

* ``format_penalty`` if its action does not parse, plus
* its potential-based shaping ``Φ(s') - Φ(s)`` (``info["shaping"]``; the potential is
  0 at the start and at the end of every episode, so shaping sums to exactly 0), plus
* on the last step, the grader's total of the final state.

So the episode's return (the sum of its step rewards) equals the final
``info["reward_breakdown"]["total"]``: the grader's total plus a ``format`` term
(:func:`~forgegym.rewards.with_step_terms`). ``info["score"]`` is the breakdown's score
in [0, 1], never shaped or penalised. ``grade_completions`` (and so the TRL reward
functions) return the ``total`` of a one-step episode.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym
from gymnasium.error import ResetNeeded

from forgegym.core.actions import ActionModel, ActionSet
from forgegym.core.spaces import UnicodeText
from forgegym.core.task import CANARY_PREFIX, Task, TaskBank, UnknownTaskError, served_task_id
from forgegym.rewards.breakdown import default_solved

if TYPE_CHECKING:
    from forgegym.rewards import RewardBreakdown

__all__ = [
    "ForgeEnv",
    "StepOutcome",
    "accepted_kwargs",
    "check_number",
    "check_positive_int",
    "grade_items",
    "reject_unknown_kwargs",
    "uses_batch_grading",
]

#: Options ``reset`` understands; anything else is a ``ValueError``.
RESET_OPTIONS = frozenset({"task_id", "difficulty"})


def uses_batch_grading(env: Any) -> bool:
    """Whether to grade through ``env.grade_batch`` (one batch across tasks): optimised
    grading is on and the env's class declares :attr:`ForgeEnv.batch_grading` (the TRL
    reward functions and the sharded grading processes dispatch on it)."""
    return bool(getattr(env, "optimised_grading", False)) and bool(
        getattr(type(env), "batch_grading", False)
    )


def grade_items(env: ForgeEnv, items: Sequence[tuple[str, str]]) -> list[tuple[float, Any]]:
    """Grade ``(task_id, completion)`` pairs as single-turn episodes: the one call the
    TRL reward functions and the sharded grading processes make.

    The env's own :meth:`~ForgeEnv.grade_batch` (one batch across tasks) where
    :func:`uses_batch_grading` says so, else the generic per-task one (one
    ``grade_completions`` per task, which honours ``optimised_grading=False``: the
    reference path). The same ``(reward, breakdown)`` pairs either way, in ``items``'
    order."""
    if uses_batch_grading(env):
        return list(env.grade_batch(items))
    return list(ForgeEnv.grade_batch(env, items))


def accepted_kwargs(cls: type) -> list[str] | None:
    """Keyword arguments ``cls(...)`` accepts (what ``gym.make(id, **kwargs)`` may pass),
    sorted: the ``__init__`` parameters up the MRO, followed through each ``**kwargs``
    until an ``__init__`` without one. ``None`` when the signatures cannot tell."""
    import inspect

    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameters = list(inspect.signature(init).parameters.values())[1:]
        except (TypeError, ValueError):
            return None
        names.update(
            p.name
            for p in parameters
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and not p.name.startswith("_")
        )
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            return sorted(names)
    return None


def reject_unknown_kwargs(
    cls: type, kwargs: dict[str, Any], supplied: tuple[str, ...] = ()
) -> None:
    """A ``TypeError`` listing the accepted names when ``kwargs`` (what reached a
    ``**kwargs`` of ``cls``'s ``__init__``) holds a name no ``__init__`` in its chain
    accepts (or one ``cls`` itself passes on, ``supplied``): a misspelt or undocumented
    option is never silently ignored."""
    names = accepted_kwargs(cls)
    if names is None:  # the signatures cannot tell: constructing is the only check
        return
    accepted = [name for name in names if name not in supplied]
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise TypeError(
            f"{cls.__name__}: unknown keyword argument(s) {unknown}; accepted: {accepted}"
        )


def check_positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    """Validate an integer argument, raising ``ValueError`` that names it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def check_number(
    name: str, value: Any, *, low: float | None = None, high: float | None = None
) -> float:
    """Validate a real argument within ``[low, high]``, raising ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"{name} must be a number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be in [{low}, {high}], got {value!r}")
    return float(value)


@dataclass
class StepOutcome:
    """What a family's ``_execute`` reports for one parsed step.

    ``reward`` is the step's potential-based shaping only: a family that pays it must
    keep ``self._shaping_potential`` equal to the sum it has paid so far in the episode,
    so that the base class can settle it (pay ``-potential``) on the last step. Any other
    per-step reward would make the episode's return differ from the final ``total``.
    """

    feedback: str
    reward: float = 0.0
    terminated: bool = False
    info: dict[str, Any] | None = None


class ForgeEnv(gym.Env[str, str]):
    """Base class of every forgegym environment (see the module docstring).

    Args:
        task_bank: where tasks come from.
        max_steps: step budget; ``1`` is the single-turn mode one-shot GRPO uses.
        difficulty: default difficulty for ``reset`` (``None`` samples any level).
        format_penalty: reward of a step whose action does not parse (<= 0).
        max_action_chars: longest action accepted by ``action_space``.
        render_mode: ``"ansi"`` (``render`` returns the observation) or ``"human"``.
        optimised_grading: grade batches (``grade_completions``, ``grade_batch``, the TRL
            reward functions) on the family's optimised path: identical completions
            graded once, batch work shared, the sandbox pool kept busy across tasks.
            ``False`` selects the reference path. Both give the same rewards and
            breakdowns (the conformance suite checks it for every family); every
            family accepts this argument.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 1}  # type: ignore[misc]
    action_space: UnicodeText
    observation_space: UnicodeText
    family: ClassVar[str] = "base"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        if (
            cls.batch_grading
            and "grade_completions" in own
            and "grade_batch" not in own
            and "batch_grading" not in own
        ):
            raise TypeError(
                f"{cls.__name__} overrides grade_completions but inherits batch_grading=True: "
                "set batch_grading = False (grade_batch would bypass the override) or "
                "define grade_batch too"
            )

    @staticmethod
    def success_predicate(breakdown: RewardBreakdown) -> bool:
        """The family's public success predicate (``info["success"]``, ``tasks verify``,
        the TRL reward functions, curricula): the env owns it, and the registered
        :class:`~forgegym.family.Family` reads it from here. Default: no gate fired and
        a full score; a family overrides this static method."""
        return default_solved(breakdown)

    action_set: ClassVar[ActionSet]
    #: ``"module:attr"`` of the family's zero-argument function returning its canary bank
    #: (impossible variants of its tasks, ids ``canary/<task id>``; see
    #: :mod:`forgegym.tasklib.canaries`), ``None``: the family has none. The env owns it,
    #: like its success predicate, so any env of the family serves canary ids in any
    #: process (the TRL reward functions' grading processes included).
    canaries: ClassVar[str | None] = None
    #: Named task banks the env serves besides its default (``make(..., bank=NAME)``):
    #: name -> ``"module:factory"`` of a :class:`~forgegym.core.bank.TaskBank`
    #: (Bugfix's ``"real"``: the factory's real-project tasks). ``forgegym list`` shows them.
    named_banks: ClassVar[dict[str, str]] = {}
    #: The env's ``grade_batch`` grades a batch of many tasks at once and gives what
    #: ``grade_completions`` gives per task (the code families, Oversight): with
    #: ``optimised_grading`` on, the TRL reward functions and the sharded grading
    #: processes grade through it (:func:`uses_batch_grading`). ``False`` (the generic
    #: ``grade_batch``, one ``grade_completions`` per task): they call
    #: ``grade_completions`` per task. A subclass that overrides ``grade_completions``
    #: without its own ``grade_batch`` sets it back to ``False`` (a ``TypeError`` at class
    #: creation when it says nothing: the batch path would bypass its override).
    batch_grading: ClassVar[bool] = False
    #: The system prompt put in ``info["messages"]``; families override.
    system_prompt: ClassVar[str] = "You are an expert software engineer acting in an environment."

    def __init__(
        self,
        *,
        task_bank: TaskBank,
        max_steps: int = 8,
        difficulty: int | None = None,
        format_penalty: float = -0.1,
        max_action_chars: int = 262_144,
        max_observation_chars: int = 1_048_576,
        render_mode: str | None = None,
        optimised_grading: bool = True,
    ) -> None:
        if not isinstance(optimised_grading, bool):
            raise ValueError(f"optimised_grading: expected a bool, got {optimised_grading!r}")
        self.optimised_grading = optimised_grading
        self.task_bank = task_bank
        self.max_steps = check_positive_int("max_steps", max_steps)
        if difficulty is not None and difficulty not in task_bank.difficulty_levels:
            raise ValueError(
                f"difficulty must be one of {list(task_bank.difficulty_levels)} or None, "
                f"got {difficulty!r}"
            )
        self.difficulty = difficulty
        self.format_penalty = check_number("format_penalty", format_penalty, low=-10.0, high=0.0)
        check_positive_int("max_action_chars", max_action_chars)
        check_positive_int("max_observation_chars", max_observation_chars)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.action_space = UnicodeText(max_length=max_action_chars)
        self.observation_space = UnicodeText(max_length=max_observation_chars)
        self._task: Task | None = None
        self._step_count = 0
        self._done = False
        self._observation = ""
        self._messages: list[dict[str, str]] = []
        self._last_breakdown: RewardBreakdown | None = None
        self._parse_errors = 0
        self._shaping_potential = 0.0

    # ----------------------------------------------------------- family hooks
    @abstractmethod
    def _begin_episode(self, task: Task) -> None:
        """Prepare per-episode state (workspace, chaos schedule, ...)."""

    @abstractmethod
    def _execute(self, actions: Sequence[ActionModel]) -> StepOutcome:
        """Run the parsed actions of one step, in order."""

    @abstractmethod
    def _grade(self) -> RewardBreakdown:
        """Final grading of the episode's current state (submit or truncation)."""

    @abstractmethod
    def _render_observation(self, feedback: str | None) -> str:
        """A self-contained prompt: the task, the current state and ``feedback``."""

    def solved(self, breakdown: RewardBreakdown) -> bool:
        """Whether a graded episode counts as solved (``info["success"]``).

        Public: ``tasks verify``, the TRL reward functions and curricula call it. It is
        the class's :attr:`success_predicate`; a subclass may still refine ``_success``.
        """
        return bool(self._success(breakdown))

    def _success(self, breakdown: RewardBreakdown) -> bool:
        return bool(type(self).success_predicate(breakdown))

    def _end_episode(self) -> None:
        """Release per-episode resources (called on reset and close)."""

    def _extra_info(self) -> dict[str, Any]:
        """Family-specific keys added to every ``info``."""
        return {}

    @classmethod
    def canary_bank(cls) -> TaskBank | None:
        """The family's canary bank (``None`` without one); see :attr:`canaries`."""
        if cls.canaries is None:
            return None
        import importlib

        module, _, attr = cls.canaries.partition(":")
        factory = getattr(importlib.import_module(module), attr)
        return factory()  # type: ignore[no-any-return]

    def get_task(self, task_id: str) -> Task:
        """The task ``task_id`` from the env's bank, or a canary of the family (which the
        bank need not know): a shipped one, or one built on demand on a task of this
        env's bank (``canary/<its id>``); :class:`UnknownTaskError` otherwise."""
        try:
            return self.task_bank.get(task_id)
        except UnknownTaskError:
            if not task_id.startswith(CANARY_PREFIX):
                raise
            bank = self.canary_bank()
            if bank is None:
                raise
            if task_id in bank.ids():  # a shipped canary
                return bank.get(task_id)
            fresh = getattr(bank, "fresh", None)
            if fresh is None:
                raise
            # Built on demand on a task of this env's bank (design note 006, D4).
            return fresh(task_id, self.task_bank)  # type: ignore[no-any-return]

    # ------------------------------------------------------------ gymnasium
    @property
    def task(self) -> Task:
        if self._task is None:
            raise ResetNeeded("call reset() before using the environment")
        return self._task

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - RESET_OPTIONS
        if unknown:
            raise ValueError(
                f"options has unknown keys {sorted(unknown)}; allowed: {sorted(RESET_OPTIONS)}"
            )
        self._end_episode()
        task_id = options.get("task_id")
        if task_id is not None:
            if not isinstance(task_id, str):
                raise ValueError(f"options['task_id'] must be a str, got {task_id!r}")
            try:
                task = self.get_task(task_id)
            except UnknownTaskError as exc:
                raise ValueError(f"options['task_id']: unknown task {task_id!r} ({exc})") from None
        else:
            difficulty = options.get("difficulty", self.difficulty)
            if difficulty is not None and difficulty not in self.task_bank.difficulty_levels:
                raise ValueError(
                    f"options['difficulty'] must be one of "
                    f"{list(self.task_bank.difficulty_levels)}, got {difficulty!r}"
                )
            task = self.task_bank.sample(self.np_random, difficulty)
        self._task = task
        self._step_count = 0
        self._done = False
        self._last_breakdown = None
        self._parse_errors = 0
        self._shaping_potential = 0.0
        self._begin_episode(task)
        self._observation = self._fit(self._render_observation(None))
        self._messages = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": self._observation},
        ]
        info = self._info()
        info["action_schema"] = self.action_set.json_schema()
        return self._observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._task is None:
            raise ResetNeeded("call reset() before step()")
        if self._done:
            info = self._info()
            info["action_error"] = "the episode is over; call reset()"
            return self._observation, 0.0, True, False, info
        self._step_count += 1
        text = action if isinstance(action, str) else repr(action)
        if isinstance(action, str) and len(action) > self.action_space.max_length:
            parsed_error: str | None = (
                f"the action is {len(action)} characters; the limit is {self.action_space.max_length}"
            )
            parsed = None
        else:
            parsed = self.action_set.parse(action)  # type: ignore[arg-type]
            parsed_error = parsed.error
        extra: dict[str, Any] = {}
        if parsed_error is not None or parsed is None:
            self._parse_errors += 1
            outcome = StepOutcome(
                feedback=(
                    f"ACTION ERROR: {parsed_error}\nReply with a JSON action as shown in the "
                    "protocol; nothing was executed this step."
                ),
            )
            extra["action_error"] = parsed_error
        else:
            outcome = self._execute(parsed.actions)
        terminated = outcome.terminated
        truncated = not terminated and self._step_count >= self.max_steps
        shaping = 0.0 if parsed_error is not None else float(outcome.reward)
        penalty = self.format_penalty if parsed_error is not None else 0.0
        feedback = outcome.feedback
        graded = 0.0
        if terminated or truncated:
            # The potential returns to 0 at the end: the episode's shaping sums to 0.
            shaping -= self._shaping_potential
            self._shaping_potential = 0.0
            grader_breakdown = self._grade()
            graded = float(grader_breakdown.total)
            breakdown = self._episode_breakdown(grader_breakdown, self._parse_errors)
            self._last_breakdown = breakdown
            self._done = True
            ending = "submitted" if terminated else "step budget exhausted; graded as submitted"
            feedback = f"{feedback}\n\nEPISODE OVER ({ending}).\n{breakdown.render()}"
        self._observation = self._fit(self._render_observation(feedback))
        self._messages.append({"role": "assistant", "content": text})
        self._messages.append({"role": "user", "content": feedback})
        reward = penalty + shaping + graded
        info = self._info()
        info["shaping"] = shaping
        info.update(extra)
        if outcome.info:
            info.update(outcome.info)
        if self.render_mode == "human":
            self.render()
        return self._observation, reward, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._observation
        if self.render_mode == "human":
            print(self._observation)
        return None

    def close(self) -> None:
        self._end_episode()
        super().close()

    # -------------------------------------------------------------- grading
    def _episode_breakdown(self, graded: RewardBreakdown, parse_errors: int) -> RewardBreakdown:
        """The grader's breakdown plus the episode's format penalties (``total`` = return)."""
        from forgegym.rewards import with_step_terms

        return with_step_terms(
            graded, format_penalty=self.format_penalty, parse_errors=parse_errors
        )

    def _episode_results(
        self, breakdowns: Sequence[RewardBreakdown], penalties: Sequence[float]
    ) -> list[tuple[float, RewardBreakdown]]:
        """``(reward, breakdown)`` of single-turn episodes: the grader's breakdown plus
        the format term of a completion that did not parse (``reward == total``); for a
        family's batch ``grade_completions`` / ``grade_batch``."""
        episodes = [
            self._episode_breakdown(b, 1 if p else 0)
            for b, p in zip(breakdowns, penalties, strict=True)
        ]
        return [(b.total, b) for b in episodes]

    def grade_completions(
        self, task_id: str, completions: Sequence[str]
    ) -> list[tuple[float, RewardBreakdown]]:
        """Grade each completion as a single-turn episode on ``task_id``.

        Returns ``(reward, breakdown)`` pairs: what ``step`` returns on a one-step
        episode of the task (``reward == breakdown.total``). This generic version replays each completion through
        ``reset``/``step`` (so it resets this env); families with a batch path (the
        code families, :class:`~forgegym.envs.code_env.CodeEnv`) override it.
        """
        saved = self.max_steps
        self.max_steps = 1
        graded: list[tuple[float, RewardBreakdown]] = []
        try:
            for completion in completions:
                self.reset(options={"task_id": task_id})
                _, reward, _, _, _ = self.step(completion)
                assert self._last_breakdown is not None  # one step always ends the episode
                graded.append((float(reward), self._last_breakdown))
        finally:
            self.max_steps = saved
        return graded

    def grade_batch(self, items: Sequence[tuple[str, str]]) -> list[tuple[float, RewardBreakdown]]:
        """Grade ``(task_id, completion)`` pairs, of any tasks, as one batch.

        The same ``(reward, breakdown)`` pairs as :meth:`grade_completions` per task, in
        the order of ``items``. This generic version calls :meth:`grade_completions` once
        per task; families with a batch path across tasks override it and declare
        :attr:`batch_grading` (the TRL reward functions then use it).
        """
        by_task: dict[str, list[int]] = {}
        for index, (task_id, _) in enumerate(items):
            by_task.setdefault(task_id, []).append(index)
        out: list[tuple[float, RewardBreakdown] | None] = [None] * len(items)
        for task_id, indices in by_task.items():
            graded = self.grade_completions(task_id, [items[i][1] for i in indices])
            for index, pair in zip(indices, graded, strict=True):
                out[index] = pair
        return [pair for pair in out if pair is not None]

    # --------------------------------------------------------------- helpers
    def _fit(self, observation: str) -> str:
        """Keep an observation inside ``observation_space``: cut the middle, where long
        file listings sit, and keep the task statement and the protocol at the ends."""
        limit = self.observation_space.max_length
        if len(observation) <= limit:
            return observation
        marker = f"\n\n[... {len(observation) - limit} characters omitted ...]\n\n"
        head = (limit - len(marker)) // 2
        tail = limit - len(marker) - head
        return observation[:head] + marker + observation[-tail:]

    def _info(self) -> dict[str, Any]:
        task = self.task
        info: dict[str, Any] = {
            # What a policy sees: a canary is served under its base task's id (D5 of
            # docs/design/006-canaries.md); the caller that asked for it keeps the true id.
            "task_id": served_task_id(task.task_id),
            "family": self.family,
            "difficulty": task.difficulty,
            "step": self._step_count,
            "max_steps": self.max_steps,
            "messages": [dict(m) for m in self._messages],
        }
        info.update(self._extra_info())
        if self._done and self._last_breakdown is not None:
            info["score"] = float(self._last_breakdown.score)
            info["success"] = self.solved(self._last_breakdown)
            info["reward_breakdown"] = self._last_breakdown.model_dump(mode="json")
            # False: the grading machinery failed (see RewardBreakdown.valid); the reward
            # is no signal and trainers must skip the episode.
            info["reward_valid"] = bool(self._last_breakdown.valid)
            info["reward_invalid_cause"] = self._last_breakdown.invalid_cause
        return info

    @staticmethod
    def protocol_example(example: Any) -> str:
        """Render an example action as the fenced JSON block policies should reply with."""
        return "```json\n" + json.dumps(example, indent=2) + "\n```"
