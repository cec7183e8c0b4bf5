"""``CodeEnv``: the episode loop of the code families (Bugfix, FlakyRepair, ...).

The agent edits files in a per-episode :class:`~forgegym.sandbox.workspace.Workspace`,
runs the visible tests, lints, records plans and reviews, and submits. Every test
run happens in a fresh grading copy through the shared runner; final grading goes
through the family's :class:`~forgegym.grading.batch.Grader` so the same code path
grades one episode or a GRPO group (:meth:`CodeEnv.grade_completions`).

This module holds the episode loop (reset, actions, shaping); the env's grading is
:class:`~forgegym.envs.code_grading.CodeGrading` (the grader of each task, completions
and batches), its observation :class:`~forgegym.envs.code_observation.CodeObservation`,
and the visible tests' job and reports :mod:`forgegym.envs.visible_tests` (re-exported
here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from forgegym.core.actions import (
    CODE_ACTIONS,
    ActionModel,
    ActionSet,
    EditAction,
    LintAction,
    ListAction,
    PlanAction,
    ReadAction,
    ReflectAction,
    ReviewAction,
    RunTestsAction,
    SearchAction,
    SubmitAction,
)
from forgegym.core.env import StepOutcome, check_number, check_positive_int
from forgegym.core.navigation import (
    NavigationError,
    cut_text,
    list_tree,
    match_test_ids,
    read_lines,
    search_files,
)
from forgegym.core.task import Task, TaskBank
from forgegym.envs.code_grading import CodeGrading, claims_of
from forgegym.envs.code_observation import CodeObservation
from forgegym.envs.visible_tests import render_test_result, unknown_tests_message, visible_tests_job
from forgegym.grading.batch import Grader, Note, Submission
from forgegym.sandbox.jobs import PytestResult
from forgegym.sandbox.workspace import Workspace

if TYPE_CHECKING:
    from forgegym.rewards import RewardBreakdown
    from forgegym.sandbox.runners import Runner

__all__ = [
    "DEFAULT_OBSERVATION_BUDGET",
    "MIN_OBSERVATION_BUDGET",
    "CodeEnv",
    "render_test_result",
    "unknown_tests_message",
    "visible_tests_job",
]

#: Characters one observation of a code family may hold (``observation_budget``).
DEFAULT_OBSERVATION_BUDGET = 12_000
#: The smallest budget accepted: the protocol, the step budget and a useful share of a
#: ``read`` must fit.
MIN_OBSERVATION_BUDGET = 4_000
#: Shares of the budget: one navigation action's output, and one step's feedback.
_ACTION_SHARE = 0.45
_FEEDBACK_SHARE = 0.6


def _compile_error_text(path: str, exc: BaseException) -> str:
    """``path:line:col: SyntaxError: message`` plus the offending line, for the agent."""
    if isinstance(exc, SyntaxError):
        where = f"{path}:{exc.lineno or '?'}" + (f":{exc.offset}" if exc.offset else "")
        text = f"{where}: {type(exc).__name__}: {exc.msg}"
        if exc.text and exc.text.strip():
            text += f"\n    {exc.text.strip()[:200]}"
        return text
    return f"{path}: {type(exc).__name__}: {str(exc)[:200]}"


class CodeEnv(CodeGrading, CodeObservation):
    """Base of the code families; see :class:`~forgegym.core.env.ForgeEnv` for the common
    arguments.

    Extra args:
        grader: the family's grader (of every task that names no grading kind).
        task_graders: the graders of the tasks that name a grading kind
            (:attr:`~forgegym.core.task.Task.grading_kind`, e.g. Bugfix's ``"repo"``):
            kind -> grader; every other task is graded by ``grader`` (see
            :meth:`grader_for`).
        runner: the sandbox runner (default: the shared fork-server pool), or a name:
            ``"forkserver"``, ``"subprocess"`` or ``"ray"`` (grading fans out over a Ray
            cluster; see :mod:`forgegym.sandbox.runners.ray`).
        runner_workers: give this env its own fork-server pool of this many workers
            instead of the shared one (e.g. ``cores // num_envs`` in an async vector
            env, so that N env processes do not each start a pool of every core).
        shaping_weight: weight of potential-based shaping on the visible pass rate
            between steps (multi-step episodes only; 0 disables it). Shaping sums to 0
            over every episode (see :meth:`_shaping_reward`).
        test_timeout_s: wall limit of one visible test run.
        observation_budget: characters every observation may hold (default 12,000).
            A task whose files fit is shown whole, as it always was; a larger one
            shows the task, a repository map (a tree with sizes, the outline of the
            files the failure points at) and the files that fit, and the agent reads
            the rest with ``list``, ``read`` and ``search``. Every cut says what was
            left out and which action reads it.
        strict: refuse to grade (raise ``UnconfinedError`` here) unless the sandbox is
            fully confined on this machine (bubblewrap, user namespaces, Landlock,
            seccomp; see ``forgegym doctor``). None: the ``FORGEGYM_STRICT`` variable.
            Otherwise an incomplete sandbox only warns, once per process.

    ``optimised_grading`` (a :class:`ForgeEnv` argument) selects, for the code families,
    batch grading with identical completions graded once, batch lint, parse caches and
    jobs streamed to the pool (see :func:`~forgegym.grading.batch.grade_many`).
    """

    action_set: ClassVar[ActionSet] = ActionSet(CODE_ACTIONS)
    batch_grading: ClassVar[bool] = True

    def __init__(
        self,
        *,
        task_bank: TaskBank,
        grader: Grader,
        task_graders: Mapping[str, Grader] | None = None,
        runner: Runner | str | None = None,
        runner_workers: int | None = None,
        shaping_weight: float = 0.1,
        test_timeout_s: float = 20.0,
        observation_budget: int = DEFAULT_OBSERVATION_BUDGET,
        strict: bool | None = None,
        **kwargs: Any,
    ) -> None:
        from forgegym.sandbox import confinement

        self.observation_budget = check_positive_int(
            "observation_budget", observation_budget, minimum=MIN_OBSERVATION_BUDGET
        )
        limit = kwargs.get("max_observation_chars")
        if isinstance(limit, int) and observation_budget > limit:
            raise ValueError(
                f"observation_budget ({observation_budget}) must not exceed "
                f"max_observation_chars ({limit})"
            )

        if strict is not None and not isinstance(strict, bool):
            raise ValueError(f"strict: expected a bool or None, got {strict!r}")
        self.strict = confinement.strict_from_env() if strict is None else strict
        if self.strict:
            confinement.require_confinement(True)
        else:
            confinement.warn_if_degraded()
        super().__init__(task_bank=task_bank, **kwargs)
        self.grader = grader
        self.task_graders: dict[str, Grader] = dict(task_graders or {})
        from forgegym.sandbox.runners import resolve_runner

        runner = resolve_runner(runner)  # "forkserver" | "subprocess" | "ray": a shared one
        if runner is not None and runner_workers is not None:
            raise ValueError("runner_workers: give either runner or runner_workers, not both")
        if runner_workers is not None:
            check_positive_int("runner_workers", runner_workers)
        self._runner = runner
        self._runner_workers = runner_workers
        self._owned_runner: Runner | None = None
        self.shaping_weight = check_number("shaping_weight", shaping_weight, low=0.0, high=10.0)
        self.test_timeout_s = check_number("test_timeout_s", test_timeout_s, low=0.1, high=600.0)
        self._workspace: Workspace | None = None
        self._notes: list[Note] = []
        self._diagnoses: list[Any] = []
        # None: the episode's starting pass rate, not measured yet (see _begin_episode)
        self._progress: float | None = 0.0
        self._initial_progress: dict[str, float] = {}
        self._last_test_report: str | None = None

    # ------------------------------------------------------------- plumbing
    @property
    def runner(self) -> Runner:
        if self._runner is None:
            from forgegym.sandbox.runners import ForkServerRunner, get_default_runner

            if self._runner_workers is not None:
                self._runner = self._owned_runner = ForkServerRunner(
                    workers=self._runner_workers, strict=self.strict
                )
            else:
                self._runner = get_default_runner()
            if self.strict and not self._runner.confined:
                from forgegym.sandbox.confinement import UnconfinedError

                raise UnconfinedError(f"strict: the runner {self._runner!r} is not confined")
        return self._runner

    @property
    def workspace(self) -> Workspace:
        if self._workspace is None:
            raise RuntimeError("no workspace: call reset() first")
        return self._workspace

    @property
    def _shaping_active(self) -> bool:
        return self.shaping_weight > 0 and self.max_steps > 1

    def _begin_episode(self, task: Task) -> None:
        self._workspace = Workspace(
            task.files,
            task.editable_files,
            creatable=task.creatable,
            data_files=task.data_files,
            prefix=f"fg-{self.family}-",
        )
        self._notes = []
        self._diagnoses = []
        self._last_test_report = None
        if self._shaping_active:
            # The starting pass rate depends only on the task: measured once, and only
            # when a step needs it (a step that neither edits nor runs the whole suite),
            # not at reset: a real task's visible suite takes seconds, and an episode
            # whose first step edits never needs it.
            self._progress = self._initial_progress.get(task.task_id)
        else:
            self._progress = 0.0

    def _end_episode(self) -> None:
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None

    def close(self) -> None:
        super().close()
        for grader in (self.grader, *self.task_graders.values()):
            close_grader = getattr(grader, "close", None)
            if callable(close_grader):
                close_grader()
        if self._owned_runner is not None:
            self._owned_runner.close()
            self._owned_runner = self._runner = None

    def _extra_info(self) -> dict[str, Any]:
        task = self.task
        return {
            "editable_files": list(task.editable_files),
            "visible_test_files": list(task.visible_test_files),
        }

    # ------------------------------------------------------------- actions
    def run_visible_tests(self, tests: Sequence[str] | None = None) -> PytestResult:
        """Run the visible tests on the current workspace state (in a grading copy)."""
        directory = self.workspace.grading_copy()
        try:
            job = visible_tests_job(self.task, str(directory), tests, self.test_timeout_s)
            result = self.runner.run(job)
            assert isinstance(result, PytestResult)
            return result
        finally:
            self.workspace.discard(directory)

    def _visible_pass_rate(self) -> float:
        return self.run_visible_tests().pass_rate

    def _execute(self, actions: Sequence[ActionModel]) -> StepOutcome:
        feedback: list[str] = []
        errors: list[str] = []  # rejected actions: the first is info["action_error"]
        terminated = False
        edited = False
        measured: float | None = None
        for action in actions:
            if isinstance(action, EditAction):
                report = self.workspace.apply_edits(action.edits)
                self._diagnoses.extend(claims_of(action))
                edited = edited or report.ok
                measured = None if report.ok else measured
                if report.ok:
                    feedback.append(self._edit_feedback(report.applied))
                else:
                    feedback.append(report.render())
                    errors.append(feedback[-1])
            elif isinstance(action, RunTestsAction):
                selection = self._select_tests(action)
                if isinstance(selection, str):
                    feedback.append(selection)
                    errors.append(selection)
                    continue
                test_report, rate = self._run_tests_action(selection)
                feedback.append(test_report)
                if rate is not None:
                    measured = rate
            elif isinstance(action, (ListAction, ReadAction, SearchAction)):
                try:
                    feedback.append(self._navigate(action))
                except NavigationError as exc:
                    feedback.append(f"{action.action} rejected: {exc}")
                    errors.append(feedback[-1])
            elif isinstance(action, LintAction):
                feedback.append(self._lint_report())
            elif isinstance(action, (PlanAction, ReviewAction, ReflectAction)):
                self._notes.append(Note(kind=action.action, text=action.text))
                feedback.append(f"{action.action} recorded.")
            elif isinstance(action, SubmitAction):
                self._diagnoses.extend(claims_of(action))
                terminated = True
                feedback.append("Submitted.")
                break
            else:  # pragma: no cover - the action set and this dispatch must agree
                name = getattr(action, "action", type(action).__name__)
                feedback.append(f"{name}: not available in this environment")
        reward = self._shaping_reward(terminated=terminated, edited=edited, measured=measured)
        return StepOutcome(
            feedback=cut_text(
                "\n\n".join(feedback),
                int(self.observation_budget * _FEEDBACK_SHARE),
                "this step's results",
                "take fewer actions per step, or read smaller ranges",
            ),
            reward=reward,
            terminated=terminated,
            info={"action_error": errors[0]} if errors else None,
        )

    def _navigate(self, action: ListAction | ReadAction | SearchAction) -> str:
        """Run one navigation action over the workspace's files (the trusted parent
        reads its in-memory copy; nothing outside the workspace is reachable)."""
        files = self.workspace.current
        cap = int(self.observation_budget * _ACTION_SHARE)
        if isinstance(action, ListAction):
            return list_tree(files, action.path, max_chars=cap, label=self._file_label)
        if isinstance(action, ReadAction):
            return read_lines(files, action.path, action.start, action.end, max_chars=cap)
        return search_files(files, action.pattern, action.path, regex=action.regex, max_chars=cap)

    def _edit_feedback(self, applied: Sequence[str]) -> str:
        """What an applied edit reports: the files changed, or, when an edited Python
        file no longer compiles, the compile error (the final grading gates on it).
        ``compile`` only parses (nothing runs), over sources within the parser's bounds."""
        from forgegym.rewards import bounded

        problems: list[str] = []
        for entry in applied:
            path = entry.split(" -> ")[-1]
            source = self.workspace.current.get(path)
            if source is None or not path.endswith(".py"):
                continue
            problem = bounded.source_problem(source)
            if problem is not None:
                problems.append(f"{path}: cannot be checked ({problem})")
                continue
            try:
                compile(source, path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                problems.append(_compile_error_text(path, exc))
        if not problems:
            return "Applied edits to: " + ", ".join(applied)
        return (
            "Applied edits to: "
            + ", ".join(applied)
            + ", but the result does not compile (fix it: a submission that does not "
            + "compile scores below doing nothing):\n"
            + "\n".join(problems)
        )

    def _select_tests(self, action: RunTestsAction) -> RunTestsAction | str:
        """``action`` with its ``tests`` resolved to visible test ids as pytest resolves
        them (ids, files, folders, ``file::test`` prefixes; see
        :func:`~forgegym.core.navigation.match_test_ids`), or the rejection when one
        of them selects nothing (the same for every code family)."""
        if not action.tests:
            return action
        known = list(self.task.visible_test_ids)
        selected, unknown = match_test_ids(action.tests, known)
        if unknown:
            return unknown_tests_message(unknown, known)
        return action.model_copy(update={"tests": selected})

    def _run_tests_action(self, action: RunTestsAction) -> tuple[str, float | None]:
        """Handle ``run_tests`` (its ids already checked): the report shown to the agent,
        and the progress measured (``None`` when the run says nothing about the whole
        task, e.g. a subset). Families with another notion of progress (FlakyRepair's
        chaos reruns) override it."""
        result = self.run_visible_tests(action.tests)
        self._last_test_report = render_test_result(result)
        return self._last_test_report, None if action.tests else result.pass_rate

    def _shaping_reward(self, *, terminated: bool, edited: bool, measured: float | None) -> float:
        """Potential-based shaping on progress p (the visible pass rate; FlakyRepair: the
        chaos pass rate), Ng et al. 1999.

        The potential of a state is ``w·Φ(p) = w·p²`` once the episode has taken a
        parsed step, and 0 at its start and at its end (``self._shaping_potential``
        holds the current one; :class:`~forgegym.core.env.ForgeEnv` pays ``-potential``
        on the last step, truncation included). So each step pays the change of
        potential, and over every episode the shaping sums to exactly 0: the return is
        the final ``total`` whatever the path, no policy can farm shaping, and the
        optimal policy is unchanged. The first parsed step collects ``w·Φ(p)`` of the
        state it leaves; an edit that fixes tests later collects the rise.
        """
        if not self._shaping_active or terminated or self._step_count >= self.max_steps:
            return 0.0  # the last step: the base class settles the potential to 0
        from forgegym.rewards import potential

        progress = self._progress
        if edited or measured is not None:
            progress = measured if measured is not None else self._visible_pass_rate()
        elif progress is None:  # nothing changed since reset: the starting rate
            progress = self._initial_progress[self.task.task_id] = self._visible_pass_rate()
        self._progress = progress
        new = self.shaping_weight * potential(progress)
        reward = new - self._shaping_potential
        self._shaping_potential = new
        return reward

    def _lint_report(self) -> str:
        from forgegym.rewards.lint import LintError, lint_files

        # ruff only parses the files (never runs them), so it may run in the parent.
        directory = self.workspace.grading_copy()
        try:
            paths = sorted(p for p in self.workspace.agent_files() if p.endswith(".py"))
            findings = lint_files(paths, root=directory)
        except LintError as exc:
            return f"lint: unavailable ({exc})"
        finally:
            self.workspace.discard(directory)
        if not findings:
            return "lint: no findings in the editable files."
        return "lint findings:\n" + "\n".join(
            f"- {f.path}:{f.line}:{f.column} {f.code} {f.message}" for f in findings[:30]
        )

    # ------------------------------------------------------------- grading
    def _submission(self) -> Submission:
        workspace = self.workspace
        return Submission(
            task=self.task,
            files=workspace.agent_files(),
            workspace=workspace,
            deleted=tuple(workspace.deleted_files()),
            notes=list(self._notes),
            diagnosis=self._diagnoses[-1] if self._diagnoses else None,
            diagnoses=list(self._diagnoses),
            steps_used=self._step_count,
            max_steps=self.max_steps,
            parse_errors=self._parse_errors,
        )

    def _grade(self) -> RewardBreakdown:
        return self.grade_submissions([self._submission()])[0]
