"""``Forge/Bugfix-v0``: repair a module whose behaviour procedurally injected bugs broke."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from forgegym.core.env import check_number
from forgegym.core.task import TaskBank
from forgegym.envs.bugfix.bank import BugfixTaskBank
from forgegym.envs.bugfix.grader import BugfixGrader, solved
from forgegym.envs.bugfix.repo import RepoAwareGrader, RepoGrader
from forgegym.envs.code_env import CodeEnv
from forgegym.rewards import RewardBreakdown

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = ["BugfixEnv"]


class BugfixEnv(CodeEnv):
    """Fix the bug(s) injected into a small, realistic Python module.

    ## Description

    Each task is one module from a corpus of 42 small reference modules (text parsing,
    iterators, intervals, numbers, calendar arithmetic without the wall clock, graph and
    string algorithms, ...) into which a libcst mutation engine injected one to three
    bugs (off-by-one ranges and slices, flipped comparisons, swapped ``and``/``or``,
    arithmetic swaps, negated conditions, wrong return values, removed statements,
    swapped arguments, wrong defaults, wrong variables, ...). Every served task was
    validated offline in the sandbox: at least one visible test and one hidden check fail,
    and the rest of the behaviour is intact. The observation reads like a bug report: the
    failing test output (or, at the hardest level, only a user's report of one wrong
    output), the file tree, every file, the step budget and the action protocol.

    ## Action Space

    Text (:class:`~forgegym.core.spaces.UnicodeText`): one JSON action or a list of them,
    in a fenced ```json block: ``edit`` (``{path, search, replace}`` or
    ``{path, content}``; only the module is editable), ``run_tests``, ``lint``,
    ``plan``/``review``/``reflect`` ``{text}`` and ``submit``.

    ## Observation Space

    Text: a self-contained prompt (bug report, files, budget, last action's result).

    ## Rewards

    Final grading (on ``submit`` or truncation) composes, via :mod:`forgegym.rewards`:
    gates first (hack-flagged patch -1.0, non-compiling patch -0.3), then the hidden
    differential checks' fail-to-pass rate (weight 6), the visible pass rate, ruff lint,
    diff size and step efficiency (each scaled by the hidden fail-to-pass rate), a
    grounded ``review``/``reflect`` note naming the buggy file and function, minus a
    regression penalty (hidden checks the bug had left intact that now fail) and a no-op
    penalty. Between steps, potential-based shaping on the visible pass rate
    (``shaping_weight``) guides multi-step episodes; it sums to 0 over every episode.
    An action that does not parse costs ``format_penalty`` (a ``format`` term of the
    final breakdown), so the episode's return is ``info["reward_breakdown"]["total"]``
    (README, "Rewards: one number"). A repository task (``repo_path``) is graded by
    its tests instead of differential checks (:mod:`forgegym.envs.bugfix.repo`).

    ## Starting State

    A task drawn from :class:`~forgegym.envs.bugfix.bank.BugfixTaskBank` with
    ``self.np_random`` (or the one named by ``options["task_id"]``; levels via
    ``options["difficulty"]``): 1 = one obvious bug with failing tests shown, 2 = one
    subtle bug, or one bug shown only as a user's symptom, or two bugs, 3 = two bugs
    shown only as a symptom, or three bugs.

    ## Episode End

    Terminated on ``submit``; truncated after ``max_steps`` steps (graded as if
    submitted). ``info["success"]`` is true when every hidden check passes and no gate
    fired.

    ## Arguments

    * ``max_steps`` (int, 8): step budget; ``1`` is single-turn (one-shot GRPO).
    * ``difficulty`` (1, 2, 3 or None): default level for ``reset``.
    * ``weights`` (dict): overrides of the reward weights (``hidden``, ``visible``,
      ``lint``, ``diff``, ``efficiency``, ``notes``, ``regression``, ``noop``).
    * ``shaping_weight`` (float, 0.1), ``format_penalty`` (float, -0.1),
      ``test_timeout_s`` (float, 20), ``grading_timeout_s`` (float, 10).
    * ``task_bank``, ``runner``: injectable for tests and custom banks (a
      :class:`~forgegym.core.task.TaskList` of your own tasks; see
      :mod:`forgegym.envs.bugfix.repo`).
    * ``repo_path`` (str), ``failing_tests`` (list of pytest ids), ``hidden_tests``
      (list of test files, optional), ``editable_files`` (paths or glob patterns,
      optional): one task from your own repository, graded by
      fail-to-pass on ``failing_tests`` (and the hidden tests that fail now) and
      pass-to-pass on every other test (:func:`~forgegym.envs.bugfix.repo.repo_task`).

    ## Example

    >>> import gymnasium as gym
    >>> import forgegym
    >>> from forgegym.family import family_for_env
    >>> env = gym.make("Forge/Bugfix-v0", max_steps=1)
    >>> obs, info = env.reset(seed=0, options={"task_id": "bugfix/chunk_list/seed"})
    >>> action = family_for_env("Forge/Bugfix-v0").reference_action()(env.unwrapped.task)
    >>> obs, reward, terminated, truncated, info = env.step(action)
    >>> info["success"]
    True
    """

    family: ClassVar[str] = "bugfix"

    @staticmethod
    def success_predicate(breakdown: RewardBreakdown) -> bool:
        """The family's public success predicate (``info["success"]``)."""
        return solved(breakdown)

    system_prompt: ClassVar[str] = (
        "You are an expert Python engineer fixing bugs. Read the bug report and the code, "
        "find the root cause, and make the smallest correct fix. Reply with JSON actions."
    )

    def __init__(
        self,
        *,
        weights: Mapping[str, float] | None = None,
        grading_timeout_s: float = 10.0,
        task_bank: TaskBank | None = None,
        test_timeout_s: float = 20.0,
        runner: Runner | None = None,
        repo_path: str | None = None,
        failing_tests: Sequence[str] | None = None,
        hidden_tests: Sequence[str] = (),
        editable_files: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        timeout_s = check_number("grading_timeout_s", grading_timeout_s, low=0.1, high=600.0)
        grader = RepoAwareGrader(
            BugfixGrader(weights=weights, timeout_s=timeout_s),
            RepoGrader(weights=weights, timeout_s=max(timeout_s, test_timeout_s)),
        )
        if repo_path is None and (
            failing_tests is not None or hidden_tests or editable_files is not None
        ):
            raise ValueError("repo_path: required with failing_tests/hidden_tests/editable_files")
        if repo_path is not None:
            if failing_tests is None:
                raise ValueError("failing_tests: required with repo_path (pytest ids that fail)")
            if task_bank is not None:
                raise ValueError("task_bank: give either task_bank or repo_path, not both")
            from forgegym.core.task import TaskList
            from forgegym.envs.bugfix.repo import repo_task
            from forgegym.sandbox.runners import resolve_runner

            task = repo_task(
                repo_path,
                failing_tests,
                hidden_tests=hidden_tests,
                editable_files=editable_files,
                runner=resolve_runner(runner),
                timeout_s=test_timeout_s,
            )
            task_bank = TaskList([task])
        super().__init__(
            task_bank=task_bank or BugfixTaskBank(),
            grader=grader,
            runner=runner,
            test_timeout_s=test_timeout_s,
            **kwargs,
        )

    def _task_section(self) -> str:
        task = self.task
        return (
            f"# Bug report: {task.title}\n\n{task.description}\n\n"
            f"Editable: {', '.join(task.editable_files)}. Read-only tests: "
            f"{', '.join(task.visible_test_files)}."
        )
