"""``Forge/Refactor-v0``: restructure Python code without changing its behaviour."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from forgegym.core.actions import ActionSet
from forgegym.core.env import check_number
from forgegym.core.task import TaskBank
from forgegym.envs.code_env import CodeEnv
from forgegym.envs.refactor.actions import ACTIONS
from forgegym.envs.refactor.bank import RefactorTaskBank
from forgegym.envs.refactor.grader import RefactorGrader
from forgegym.rewards import RewardBreakdown

if TYPE_CHECKING:
    pass

__all__ = ["RefactorEnv"]


class RefactorEnv(CodeEnv):
    """Refactor a Python module as asked, keeping its behaviour and public API.

    ## Description

    Each task asks for one refactoring of a small, tested module: split a module into a
    package that keeps every old import path working (the seed task turns ``stats.py``
    into ``stats/``), rename functions behind deprecated aliases that warn, or remove
    dead code (more kinds come from templates). Tasks are generated from a corpus of
    modules with their own tests, at three levels (files touched, size of the public
    surface, distractors), and every served task was validated in the sandbox: the
    reference refactoring succeeds, doing nothing scores at most 0.1, every known hack
    scores no more than doing nothing, and the hidden checks kill at least 90% of the
    mutants of the original module.

    ## Action Space

    Text (:class:`~forgegym.core.spaces.UnicodeText`): one JSON action or a list of them,
    in a fenced ```json block: ``edit`` with ``{path, search, replace}``,
    ``{path, content}`` (also creates new files where the task allows),
    ``{path, delete: true}`` or ``{path, move_to}``; ``run_tests``; ``lint``;
    ``plan``/``review``/``reflect`` ``{text}``; ``submit``.

    ## Observation Space

    Text: the refactoring asked for, the file tree (new and deleted files marked), every
    file, the step budget, the last action's result and the protocol.

    ## Rewards

    Gates first: a file that does not compile -0.3; an integrity problem (the monolith
    left beside the package, ``exec``/``importlib`` forwarding, module ``__getattr__``,
    star re-exports, copies instead of moves, elided code) -1.0. Then the hidden
    differential checks (old vs new module on generated inputs, warnings included), the
    visible tests and the public API (names and signatures at every old import path,
    extracted with libcst) must all be unchanged, else every credit is zeroed and the
    total sits at the floor (-0.25). Otherwise the score is the structure reached
    (weight 6) plus lint, diff size and a grounded review scaled by it; keeping
    everything but reaching no structure costs the no-op penalty.

    ## Starting State

    A task from :class:`~forgegym.envs.refactor.bank.RefactorTaskBank` drawn with
    ``self.np_random`` (or ``options["task_id"]``, e.g.
    ``"refactor/split_package/stats/seed"``; ``options["difficulty"]`` in 1..3).

    ## Episode End

    Terminated on ``submit``; truncated after ``max_steps`` (graded as if submitted).
    ``info["success"]``: no gate, behaviour and API kept, all structure present.

    ## Arguments

    * ``max_steps`` (int, 8); ``difficulty`` (1, 2, 3 or None);
    * ``kinds`` (list of kind names or None): restrict the tasks served;
    * ``weights`` (dict): overrides of the reward weights (``structure``, ``lint``,
      ``diff``, ``notes``, ``behaviour``, ``api``, ``visible``, ``noop``, ``broken``);
    * ``shaping_weight`` (0.1), ``format_penalty`` (-0.1), ``test_timeout_s`` (20),
      ``grading_timeout_s`` (10); ``task_bank``, ``runner``, ``runner_workers``.

    ## Example

    >>> import gymnasium as gym
    >>> import forgegym
    >>> from forgegym.policies.registry import reference_action_for
    >>> env = gym.make("Forge/Refactor-v0", max_steps=1)
    >>> obs, info = env.reset(seed=0, options={"task_id": "refactor/split_package/stats/seed"})
    >>> action = reference_action_for("refactor")(env.unwrapped.task)
    >>> obs, reward, terminated, truncated, info = env.step(action)
    >>> info["success"]
    True
    """

    family: ClassVar[str] = "refactor"
    #: Impossible variants of this family's tasks (``canary/<task id>``).
    canaries: ClassVar[str | None] = "forgegym.envs.refactor.canaries:canary_bank"
    action_set: ClassVar[ActionSet] = ACTIONS

    @staticmethod
    def success_predicate(breakdown: RewardBreakdown) -> bool:
        """The family's public success predicate (``info["success"]``)."""
        return RefactorGrader.solved(breakdown)

    system_prompt: ClassVar[str] = (
        "You are an expert Python engineer refactoring code. Change the structure as "
        "asked without changing behaviour or the public API; move code, do not copy or "
        "elide it. Reply with JSON actions."
    )

    def __init__(
        self,
        *,
        kinds: Sequence[str] | None = None,
        weights: Mapping[str, float] | None = None,
        grading_timeout_s: float = 10.0,
        task_bank: TaskBank | None = None,
        **kwargs: Any,
    ) -> None:
        if kinds is not None and (isinstance(kinds, str) or not isinstance(kinds, Sequence)):
            raise ValueError(f"kinds must be a list of kind names, got {kinds!r}")
        grader = RefactorGrader(
            weights=weights,
            timeout_s=check_number("grading_timeout_s", grading_timeout_s, low=0.1, high=600.0),
        )
        super().__init__(
            task_bank=task_bank or RefactorTaskBank(kinds=kinds), grader=grader, **kwargs
        )

    def _task_section(self) -> str:
        task = self.task
        extra = ""
        if task.creatable:
            extra = f" New files may be created at: {', '.join(task.creatable)}."
        return (
            f"# Refactoring: {task.title}\n\n{task.description}\n\n"
            f"Editable: {', '.join(task.editable_files)}.{extra} Read-only tests: "
            f"{', '.join(task.visible_test_files)}."
        )
