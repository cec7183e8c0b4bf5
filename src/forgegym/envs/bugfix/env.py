"""``Forge/Bugfix-v0``: repair a module whose behaviour procedurally injected bugs broke."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from forgegym.core.actions import ActionSet
from forgegym.core.env import check_number, reject_unknown_kwargs
from forgegym.core.task import TaskBank
from forgegym.envs.bugfix.actions import ACTIONS
from forgegym.envs.bugfix.bank import BugfixTaskBank
from forgegym.envs.bugfix.grader import BugfixGrader, solved
from forgegym.envs.bugfix.repo import GRADING_KIND, REPO_DEFAULTS, RepoGrader
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
    * ``bank="real"``: tasks mutated from pinned real projects by the task factory
      (:mod:`forgegym.envs.bugfix.real`); ``bank="path/to/folder"`` for manifests you built
      with ``forgegym tasks build`` (or ``task_bank=RealTaskBank(path)``);
      ``statements`` (``"traceback"``): how much of the bug's location its statements
      give, ``"assertion"``, ``"symptom"`` or ``"all"`` (each bug once per style, levels
      1-6; :mod:`forgegym.envs.bugfix.statements`).
    * ``task_bank``, ``runner``: injectable for tests and custom banks (a
      :class:`~forgegym.core.task.TaskList` of your own tasks; see
      :mod:`forgegym.envs.bugfix.repo`).
    * ``repo_path`` (str), ``failing_tests`` (list of pytest ids), ``hidden_tests``
      (list of test files, optional), ``editable_files`` (paths or glob patterns,
      optional; default the package's modules): one task from your own repository, graded
      by fail-to-pass on ``failing_tests`` (and the hidden tests that fail now) and
      pass-to-pass on the other tests (:func:`~forgegym.envs.bugfix.repo.repo_task`).
      Repository-mode options: ``max_file_bytes`` (1,000,000), ``max_files`` (2,000),
      ``test_timeout_s`` (None: measured, ``time_limit_multiple`` (3) times the
      baseline run, at most ``time_limit_cap_s`` (600)), ``test_dependencies`` (None:
      what the project declares; requirements or local paths), ``cache_dir`` (None:
      ``$FORGEGYM_CACHE_DIR`` or ``~/.cache/forgegym``), ``host_check`` (True: compare
      with a plain pytest run on the host; ``info["repo_report"]``), ``full_suite``
      (False: grade the failing tests and the test files of the changed modules).
      An unknown keyword is a ``TypeError`` listing the accepted ones.

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
    #: Impossible variants of this family's tasks (``canary/<task id>``).
    canaries: ClassVar[str | None] = "forgegym.envs.bugfix.canaries:canary_bank"
    action_set: ClassVar[ActionSet] = ACTIONS
    named_banks: ClassVar[dict[str, str]] = {"real": "forgegym.envs.bugfix.real:RealTaskBank"}

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
        test_timeout_s: float | None = None,
        runner: Runner | None = None,
        repo_path: str | None = None,
        failing_tests: Sequence[str] | None = None,
        hidden_tests: Sequence[str] = (),
        editable_files: Sequence[str] | None = None,
        max_file_bytes: int = REPO_DEFAULTS["max_file_bytes"],
        max_files: int = REPO_DEFAULTS["max_files"],
        time_limit_multiple: float = REPO_DEFAULTS["time_limit_multiple"],
        time_limit_cap_s: float = REPO_DEFAULTS["time_limit_cap_s"],
        test_dependencies: Sequence[str] | None = None,
        cache_dir: str | None = None,
        host_check: bool = REPO_DEFAULTS["host_check"],
        full_suite: bool = REPO_DEFAULTS["full_suite"],
        bank: str | None = None,
        statements: str | Sequence[str] = "traceback",
        **kwargs: Any,
    ) -> None:
        reject_unknown_kwargs(type(self), kwargs, supplied=("grader", "task_graders"))
        timeout_s = check_number("grading_timeout_s", grading_timeout_s, low=0.1, high=600.0)
        if test_timeout_s is not None:
            test_timeout_s = check_number("test_timeout_s", test_timeout_s, low=0.1, high=3600.0)
        grader = BugfixGrader(weights=weights, timeout_s=timeout_s)
        # Repository and real-bank tasks (``Task.grading_kind == "repo"``) are graded by
        # their tests (and behaviour checks): CodeEnv.grader_for picks per task, so one
        # TaskList (one TRL batch) may mix them with the bank's tasks.
        repo_grader = RepoGrader(
            weights=weights,
            timeout_s=max(timeout_s, test_timeout_s or 0.0),
            full_suite=full_suite,
        )
        repo_only = {
            "failing_tests": failing_tests is not None,
            "hidden_tests": bool(hidden_tests),
            "editable_files": editable_files is not None,
            "test_dependencies": test_dependencies is not None,
            "cache_dir": cache_dir is not None,
            "max_file_bytes": max_file_bytes != REPO_DEFAULTS["max_file_bytes"],
            "max_files": max_files != REPO_DEFAULTS["max_files"],
            "time_limit_multiple": time_limit_multiple != REPO_DEFAULTS["time_limit_multiple"],
            "time_limit_cap_s": time_limit_cap_s != REPO_DEFAULTS["time_limit_cap_s"],
            "host_check": host_check != REPO_DEFAULTS["host_check"],
            "full_suite": full_suite != REPO_DEFAULTS["full_suite"],
        }
        if repo_path is None and any(repo_only.values()):
            given = [name for name, set_ in repo_only.items() if set_]
            raise ValueError(f"repo_path: required with the repository-mode options {given}")
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
                max_file_bytes=max_file_bytes,
                max_files=max_files,
                time_limit_multiple=time_limit_multiple,
                time_limit_cap_s=time_limit_cap_s,
                test_dependencies=test_dependencies,
                cache_dir=cache_dir,
                host_check=host_check,
            )
            task_bank = TaskList([task])
        if bank is not None:
            from pathlib import Path

            from forgegym.envs.bugfix.real import RealTaskBank

            if not isinstance(bank, str) or not (bank == "real" or Path(bank).is_dir()):
                raise ValueError(
                    "bank: expected 'real' (the factory's real-project tasks) or a folder of "
                    f"manifests built by `forgegym tasks build`, got {bank!r}"
                )
            if task_bank is not None:
                raise ValueError("bank: give either bank or task_bank/repo_path, not both")
            from forgegym.envs.bugfix.statements import statement_styles

            styles = statement_styles(statements)  # a ValueError naming ``statements``
            try:
                manifests = () if bank == "real" else (bank,)
                task_bank = RealTaskBank(*manifests, statements=styles)
            except (FileNotFoundError, ValueError) as exc:
                raise ValueError(f"bank: {exc}") from exc
        elif statements != "traceback":
            raise ValueError("statements: statement styles are for bank='real' or a built bank")
        super().__init__(
            task_bank=task_bank or BugfixTaskBank(),
            grader=grader,
            task_graders={GRADING_KIND: repo_grader},
            runner=runner,
            test_timeout_s=20.0 if test_timeout_s is None else test_timeout_s,
            **kwargs,
        )

    def _extra_info(self) -> dict[str, Any]:
        info = super()._extra_info()
        report = self.task.metadata.get("repo_report")
        if report is not None:
            # A repository task: how the sandbox agreed with the host at make, which
            # tests are left out of grading and why, and the measured time limit.
            info["repo_report"] = copy.deepcopy(report)
        return info

    def _task_section(self) -> str:
        task = self.task
        return (
            f"# Bug report: {task.title}\n\n{task.description}\n\n"
            f"Editable: {', '.join(task.editable_files)}. Read-only tests: "
            f"{', '.join(task.visible_test_files)}."
        )
