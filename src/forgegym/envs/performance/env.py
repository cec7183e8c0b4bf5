"""``Forge/Performance-v0``: make data structures fast under a complexity bound."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from forgegym.core.actions import ActionSet
from forgegym.core.env import check_number
from forgegym.core.task import TaskBank
from forgegym.envs.code_env import CodeEnv
from forgegym.envs.performance.actions import ACTIONS
from forgegym.envs.performance.bank import PerformanceTaskBank
from forgegym.envs.performance.grader import PerformanceGrader
from forgegym.envs.performance.measure import MAX_REPEATS
from forgegym.rewards import RewardBreakdown

if TYPE_CHECKING:
    pass

__all__ = ["PerformanceEnv"]


class PerformanceEnv(CodeEnv):
    """Implement, speed up or repair a data structure under a complexity bound.

    ## Description

    Each task names a data structure (LRU, LFU, TTL, weight-bounded and thread-safe
    caches, ring buffer, min/max queue, sliding-window median, top-k, union-find,
    decrease-key heap, range sums, prefix trie, token-bucket rate limiter), its contract
    and the asked per-operation complexity (O(1) or O(log n)), and starts from a stub, a
    correct but O(n) implementation, or a fast implementation with a bug. Grading
    replays hidden operation traces drawn from fresh secret seeds after the module is
    loaded and compares every result with the reference's in the trusted parent; then
    the parent measures the CPU time of the whole child process tree (never wall-clock,
    never anything the child reports) at structure sizes n, 4n and 16n, with the
    reference and a null baseline interleaved in the same batch and repeated, and judges
    the scaling exponent against the reference's and the speed ratio to it.

    ## Action Space

    Text (:class:`~forgegym.core.spaces.UnicodeText`): one JSON action or a list, in a
    fenced ```json block: ``edit`` (only the module is editable), ``run_tests``,
    ``lint``, ``plan``/``review``/``reflect`` ``{text}``, ``submit``.

    ## Observation Space

    Text: the task (contract, complexity, workload), the files, the budget and the last
    action's result.

    ## Rewards

    Gates first (hack-flagged -1.0: imports outside the allow-list, ``open``/``exec``/
    ``getattr``, sandbox-escape attributes, exit calls; compile error -0.3). Then
    ``correct`` (2), ``complexity`` (6: correct, the excess scaling exponent over the
    reference at most 0.3, the extra CPU growth from n to 16n at most twice the
    reference's cost at 16n, no run over its CPU budget), ``speed`` (2: capped
    log-speedup, full at >= 0.95x the reference), minus ``noop`` (2) when the submission
    makes no progress (not correct, or, from the naive start, still too slow).

    ## Starting State

    A task from :class:`~forgegym.envs.performance.bank.PerformanceTaskBank` (or
    ``options["task_id"]``, e.g. the seed ``performance/lru/seed``); levels 1 = stub,
    2 = naive, 3 = fast but buggy.

    ## Episode End

    Terminated on ``submit``; truncated after ``max_steps`` (graded as submitted).
    ``info["success"]``: correct, complexity gate passed and at least 0.5x the
    reference's speed.

    ## Arguments

    * ``max_steps`` (int, 8), ``difficulty`` (1-3 or None), ``weights`` (dict),
      ``shaping_weight`` (0.1), ``format_penalty`` (-0.1), ``test_timeout_s`` (20).
    * ``repeats`` (5): paired repetitions of the first measured round (more follow
      until the excess exponent's interval is within +-0.05, up to ``max_repeats``,
      17); ``cpu_budget_s`` (3.0): CPU limit
      of one measured candidate run; ``grading_timeout_s`` (30); ``grading_seed``
      (None: fresh secret seeds per grading).
    * ``task_bank``, ``runner``: injectable.

    ## Example

    >>> import gymnasium as gym
    >>> import forgegym
    >>> from forgegym.family import get_family
    >>> env = gym.make("Forge/Performance-v0", max_steps=1)
    >>> obs, info = env.reset(seed=0, options={"task_id": "performance/lru/seed"})
    >>> action = get_family("performance").reference_action()(env.unwrapped.task)
    >>> obs, reward, terminated, truncated, info = env.step(action)
    >>> info["success"]
    True
    """

    family: ClassVar[str] = "performance"
    #: Impossible variants of this family's tasks (``canary/<task id>``).
    canaries: ClassVar[str | None] = "forgegym.envs.performance.canaries:canary_bank"
    action_set: ClassVar[ActionSet] = ACTIONS

    @staticmethod
    def success_predicate(breakdown: RewardBreakdown) -> bool:
        """The family's public success predicate (``info["success"]``)."""
        return PerformanceGrader.solved(breakdown)

    system_prompt: ClassVar[str] = (
        "You are an expert Python engineer who writes fast, correct data structures. "
        "Meet the asked complexity without changing behaviour. Reply with JSON actions."
    )

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        grading_timeout_s: float = 30.0,
        repeats: int = 5,
        max_repeats: int = MAX_REPEATS,
        cpu_budget_s: float = 3.0,
        grading_seed: int | None = None,
        task_bank: TaskBank | None = None,
        **kwargs: Any,
    ) -> None:
        grader = PerformanceGrader(
            weights=weights,
            repeats=repeats,
            max_repeats=max_repeats,
            cpu_budget_s=cpu_budget_s,
            timeout_s=check_number("grading_timeout_s", grading_timeout_s, low=1.0, high=600.0),
            seed=grading_seed,
        )
        super().__init__(task_bank=task_bank or PerformanceTaskBank(), grader=grader, **kwargs)

    def _task_section(self) -> str:
        task = self.task
        return (
            f"# {task.title}\n\n{task.description}\n\nEditable: "
            f"{', '.join(task.editable_files)}. Read-only tests: "
            f"{', '.join(task.visible_test_files)}."
        )
