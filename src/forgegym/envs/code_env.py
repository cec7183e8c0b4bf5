"""``CodeEnv``: the episode loop of the code families (Bugfix, FlakyRepair, ...).

The agent edits files in a per-episode :class:`~forgegym.sandbox.workspace.Workspace`,
runs the visible tests, lints, records plans and reviews, and submits. Every test
run happens in a fresh grading copy through the shared runner; final grading goes
through the family's :class:`~forgegym.grading.batch.Grader` so the same code path
grades one episode or a GRPO group (:meth:`CodeEnv.grade_completions`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from forgegym.core.actions import (
    CODE_ACTIONS,
    ActionModel,
    ActionSet,
    EditAction,
    LintAction,
    ListAction,
    ParseResult,
    PlanAction,
    ReadAction,
    ReflectAction,
    ReviewAction,
    RunTestsAction,
    SearchAction,
    SubmitAction,
)
from forgegym.core.env import ForgeEnv, StepOutcome, check_number, check_positive_int
from forgegym.core.navigation import (
    NavigationError,
    Section,
    closest_test_ids,
    cut_text,
    fit_sections,
    list_tree,
    match_test_ids,
    mentioned_paths,
    read_lines,
    render_outline,
    search_files,
)
from forgegym.core.task import Task, TaskBank
from forgegym.grading.batch import Grader, Note, Submission, grade_many
from forgegym.grading.phases import phase
from forgegym.sandbox.jobs import (
    ProjectRun,
    PytestJob,
    PytestResult,
    RunStatus,
    TestOutcome,
    TestRecord,
)
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

_NAVIGATION_EXAMPLE = [
    {"action": "search", "pattern": "def parse_header"},
    {"action": "read", "path": "pkg/module.py", "start": 40, "end": 90},
]

_EXAMPLE_ACTION = [
    {
        "action": "edit",
        "edits": [{"path": "pkg/module.py", "search": "old line\n", "replace": "new line\n"}],
    },
    {"action": "run_tests"},
]


def _claims_of(action: ActionModel) -> list[Any]:
    """The structured claim a family's ``edit``/``submit`` may carry (its ``diagnosis``
    field, e.g. FlakyRepair's root cause); graded by the family's grader."""
    claim = getattr(action, "diagnosis", None)
    return [] if claim is None else [claim]


def visible_tests_job(
    task: Task, workdir: str, tests: Sequence[str] | None = None, timeout_s: float = 20.0
) -> PytestJob:
    """A job running the task's visible tests (or the subset ``tests``) in ``workdir``.

    A task from a user's repository (``task.metadata["project_run"]``, a
    :class:`~forgegym.sandbox.jobs.ProjectRun` as JSON) runs with its pristine pytest
    configuration, conftest files, import roots and dependencies, under the time limit
    measured at ``make`` (``task.metadata["time_limit_s"]``) when that is longer."""
    extra: dict[str, Any] = {}
    project = task.metadata.get("project_run") if isinstance(task.metadata, dict) else None
    if project is not None:
        # Its ids must not depend on the hash seed (the host check uses the same one);
        # tests the sandbox's runtime policy stopped at make are never run again.
        extra = {
            "project": ProjectRun.model_validate(project),
            "conftest": True,
            "python_hash_seed": 0,
        }
        timeout_s = max(timeout_s, float(task.metadata.get("time_limit_s") or 0.0))
        skip = set(task.metadata.get("skip_ids") or ())
        if skip:
            wanted = list(tests) if tests else list(task.visible_test_ids)
            extra["order"] = [t for t in wanted if t not in skip]
    if tests:
        return PytestJob(
            workdir=workdir,
            targets=list(tests),
            expected_ids=list(tests),
            timeout_s=timeout_s,
            **extra,
        )
    return PytestJob(
        workdir=workdir,
        targets=list(task.visible_test_files),
        expected_ids=list(task.visible_test_ids) or None,
        timeout_s=timeout_s,
        **extra,
    )


def _failure_line(record: TestRecord) -> str:
    """``FAILED id at path:line in function ErrorType: message`` (the message's first
    lines, bounded)."""
    where = ""
    if record.frames:
        frame = record.frames[-1]
        where = f" at {frame.path}:{frame.line} in {frame.function}"
    message = [line.rstrip() for line in record.message.strip().splitlines() if line.strip()]
    short = " | ".join(message[:3])[:400]
    error = f"{record.error_type}: " if record.error_type else ""
    return f"{record.outcome.value.upper()} {record.nodeid}{where} {error}{short}".rstrip()


def render_test_result(result: PytestResult, *, max_chars: int = 4000) -> str:
    """A compact, model-readable report of one test run, within ``max_chars``.

    The summary line first, then every failure with its message (failed, errored,
    skipped and missing tests: what is not a pass), then the run's stderr when it did
    not complete, then the passing tests as far as they fit. What does not fit is
    counted, never silently dropped: a run with a few failures late in a large suite
    shows all of them."""
    verdicts = result.verdicts
    passed = sum(verdicts.values())
    head = f"Test run: {result.status.value}; {passed}/{len(verdicts)} passed"
    head += f", {len(verdicts) - passed} not passed." if passed < len(verdicts) else "."
    lines: list[str] = [head]
    if result.status is not RunStatus.COMPLETED and result.detail:
        lines.append(f"  ({result.detail})")
    reported = {r.nodeid for r in result.records}
    failures = [_failure_line(r) for r in result.records if r.outcome is not TestOutcome.PASSED]
    failures += [f"NOT RUN {nodeid}" for nodeid in verdicts if nodeid not in reported]
    passes = [f"PASSED {r.nodeid}" for r in result.records if r.outcome is TestOutcome.PASSED]
    stderr = ""
    if result.status is not RunStatus.COMPLETED and result.stderr_tail.strip():
        stderr = "stderr (tail):\n" + result.stderr_tail.strip()[-800:]
    # Room for the two notes of what was cut (at most ~90 characters each).
    budget = max_chars - 200
    used = len(head)

    def take(candidates: list[str], reserve: int = 0) -> list[str]:
        nonlocal used
        kept: list[str] = []
        for line in candidates:
            if used + 1 + len(line) > budget - reserve:
                break
            kept.append(line)
            used += 1 + len(line)
        return kept

    shown_failures = take(failures)
    lines += shown_failures
    if len(shown_failures) < len(failures):
        lines.append(
            f"... {len(failures) - len(shown_failures)} more failures not listed "
            "(run_tests with `tests` for fewer at a time)"
        )
    if stderr:
        lines += take([stderr[: max(0, budget - used - 1)]] if budget - used > 40 else [])
    shown_passes = take(passes)
    lines += shown_passes
    if len(shown_passes) < len(passes):
        lines.append(f"... {len(passes) - len(shown_passes)} passing tests not listed")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 20] + "\n... (truncated)"


def unknown_tests_message(unknown: Sequence[str], known: Sequence[str]) -> str:
    """The rejection of a ``run_tests`` whose ``tests`` select nothing: the requests,
    the nearest visible ids and the files the visible tests are in (bounded, however
    large the suite)."""
    near: list[str] = []
    for request in unknown[:3]:
        near += [t for t in closest_test_ids(request, known, limit=4) if t not in near]
    files = list(dict.fromkeys(t.partition("::")[0] for t in known))
    shown_files = ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
    return (
        f"run_tests rejected: unknown test ids {list(unknown)[:5]}; nothing was run. "
        f"Closest visible tests: {near[:8]}. {len(known)} visible tests in {shown_files}; "
        "give ids, files, folders or `file::test` prefixes, as pytest takes them."
    )


def _compile_error_text(path: str, exc: BaseException) -> str:
    """``path:line:col: SyntaxError: message`` plus the offending line, for the agent."""
    if isinstance(exc, SyntaxError):
        where = f"{path}:{exc.lineno or '?'}" + (f":{exc.offset}" if exc.offset else "")
        text = f"{where}: {type(exc).__name__}: {exc.msg}"
        if exc.text and exc.text.strip():
            text += f"\n    {exc.text.strip()[:200]}"
        return text
    return f"{path}: {type(exc).__name__}: {str(exc)[:200]}"


class CodeEnv(ForgeEnv):
    """Base of the code families; see :class:`ForgeEnv` for the common arguments.

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
        self._progress: float = 0.0
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
            # The starting pass rate depends only on the task: measure it once.
            if task.task_id not in self._initial_progress:
                self._initial_progress[task.task_id] = self._visible_pass_rate()
            self._progress = self._initial_progress[task.task_id]
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
                self._diagnoses.extend(_claims_of(action))
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
                self._diagnoses.extend(_claims_of(action))
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

    def _file_label(self, path: str) -> str:
        workspace = self.workspace
        if path in set(workspace.created_files()):
            return "  (new, editable)"
        return "  (editable)" if path in workspace.editable else ""

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

        if edited or measured is not None:
            self._progress = measured if measured is not None else self._visible_pass_rate()
        new = self.shaping_weight * potential(self._progress)
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

    def grader_for(self, task: Task) -> Grader:
        """The grader of ``task``: the one ``task_graders`` holds for its grading kind
        (:attr:`~forgegym.core.task.Task.grading_kind`), else the family's grader. A
        kind with no grader here is the family's own business (Refactor's hidden
        ``kind`` names its refactoring, graded by the family's grader)."""
        kind = task.grading_kind
        return self.grader if kind is None else self.task_graders.get(kind, self.grader)

    def grade_submissions(
        self, submissions: Sequence[Submission], *, optimised: bool = False
    ) -> list[RewardBreakdown]:
        """Every submission graded by its task's grader (:meth:`grader_for`): one
        :func:`~forgegym.grading.batch.grade_many` per grader over its submissions (in
        the order of their first appearance), breakdowns in submission order. The one
        grading path of the env's episodes and batches: a batch of one kind is one
        ``grade_many``, and nothing a grader shares (identical submissions, shared runs)
        crosses tasks, so grading kinds apart changes no breakdown."""
        groups: dict[int, tuple[Grader, list[int]]] = {}
        for index, submission in enumerate(submissions):
            grader = self.grader_for(submission.task)
            groups.setdefault(id(grader), (grader, []))[1].append(index)
        breakdowns: list[RewardBreakdown | None] = [None] * len(submissions)
        for grader, indices in groups.values():
            graded = grade_many(
                grader, [submissions[i] for i in indices], self.runner, optimised=optimised
            )
            for index, breakdown in zip(indices, graded, strict=True):
                breakdowns[index] = breakdown
        return [b for b in breakdowns if b is not None]

    def _grade(self) -> RewardBreakdown:
        return self.grade_submissions([self._submission()])[0]

    def grade_completions(
        self, task_id: str, completions: Sequence[str]
    ) -> list[tuple[float, RewardBreakdown]]:
        """Grade each completion as a single-turn episode on ``task_id``, as a batch.

        Returns ``(reward, breakdown)`` pairs equal to what ``step`` would return on a
        ``max_steps=1`` episode of this task: ``reward == breakdown.total``, which
        includes a ``format`` term when the completion does not parse (the workspace is
        then graded unchanged). Non-edit actions have no effect on the final state.
        """
        if self.optimised_grading:
            return self.grade_batch([(task_id, completion) for completion in completions])
        from forgegym.rewards import bounded

        task = self.get_task(task_id)
        with bounded.uncached():
            with phase("scratch"):
                workspace = Workspace(
                    task.files,
                    task.editable_files,
                    creatable=task.creatable,
                    data_files=task.data_files,
                    prefix=f"fg-{self.family}-batch-",
                )
            try:
                submissions: list[Submission] = []
                penalties: list[float] = []
                for completion in completions:
                    with phase("parse"):
                        submission, penalty = self._parse_completion(task, workspace, completion)
                    penalties.append(penalty)
                    submissions.append(submission)
                breakdowns = self.grade_submissions(submissions)
                return self._episode_results(breakdowns, penalties)
            finally:
                with phase("scratch"):
                    workspace.close()

    def grade_batch(self, items: Sequence[tuple[str, str]]) -> list[tuple[float, RewardBreakdown]]:
        """Grade ``(task_id, completion)`` pairs, of any tasks, as one batch.

        The same ``(reward, breakdown)`` pairs as :meth:`grade_completions` per task,
        graded with one optimised :func:`~forgegym.grading.batch.grade_many` over the whole
        batch (a GRPO step's prompts x generations), so the pool stays busy across task
        boundaries and identical completions are graded once.
        """
        workspaces: dict[str, Workspace] = {}
        parsed: dict[tuple[str, str], tuple[Submission, float]] = {}
        try:
            submissions: list[Submission] = []
            penalties: list[float] = []
            for task_id, completion in items:
                key = (task_id, completion)
                if key not in parsed:
                    if task_id not in workspaces:
                        task = self.get_task(task_id)
                        workspaces[task_id] = Workspace(
                            task.files,
                            task.editable_files,
                            creatable=task.creatable,
                            data_files=task.data_files,
                            on_disk=False,
                        )
                    workspace = workspaces[task_id]
                    with phase("parse"):
                        parsed[key] = self._parse_completion(
                            self.get_task(task_id), workspace, completion, on_disk=False
                        )
                submission, penalty = parsed[key]
                submissions.append(submission)
                penalties.append(penalty)
            breakdowns = self.grade_submissions(submissions, optimised=True)
            return self._episode_results(breakdowns, penalties)
        finally:
            with phase("scratch"):
                for workspace in workspaces.values():
                    workspace.close()

    def _parse_completion(
        self, task: Task, workspace: Workspace, completion: str, *, on_disk: bool = True
    ) -> tuple[Submission, float]:
        """The single-turn submission a completion makes, and its format penalty."""
        if len(completion) > self.action_space.max_length:
            parsed = ParseResult(error="the action is longer than the action space allows")
        else:
            parsed = self.action_set.parse(completion)
        files = {p: task.files[p] for p in task.editable_files}
        deleted: tuple[str, ...] = ()
        diagnoses: list[Any] = []
        notes: list[Note] = []
        penalty = 0.0
        if not parsed.ok:
            penalty = self.format_penalty
        else:
            with phase("scratch"):
                scratch = Workspace(
                    task.files,
                    task.editable_files,
                    creatable=task.creatable,
                    data_files=task.data_files,
                    prefix="fg-parse-",
                    on_disk=on_disk,
                )
            try:
                for action in parsed.actions:
                    if isinstance(action, EditAction):
                        scratch.apply_edits(action.edits)
                        diagnoses.extend(_claims_of(action))
                    elif isinstance(action, SubmitAction):
                        diagnoses.extend(_claims_of(action))
                        break
                    elif isinstance(action, (PlanAction, ReviewAction, ReflectAction)):
                        notes.append(Note(kind=action.action, text=action.text))
                files = scratch.agent_files()
                deleted = tuple(scratch.deleted_files())
            finally:
                with phase("scratch"):
                    scratch.close()
        submission = Submission(
            task=task,
            files=files,
            workspace=workspace,
            deleted=deleted,
            notes=notes,
            diagnosis=diagnoses[-1] if diagnoses else None,
            diagnoses=diagnoses,
            steps_used=1,
            max_steps=1,
            parse_errors=0 if parsed.ok else 1,
        )
        return submission, penalty

    # ---------------------------------------------------------- observation
    def _task_section(self) -> str:
        """The problem statement; families override to add symptoms, signals, ..."""
        return f"# Task: {self.task.title}\n\n{self.task.description}"

    def _protocol_section(self) -> str:
        files_note = ""
        if self.task.creatable:
            files_note = (
                "Edits may also create files ({path, content} on a new path matching "
                + ", ".join(f"`{p}`" for p in self.task.creatable)
                + "), delete them ({path, delete: true}) and move them ({path, move_to}). "
            )
        return (
            "## Actions\nReply with one JSON action, or a list of them, in a ```json block. "
            "Actions: edit {edits: [{path, search, replace} | {path, content}]}, "
            "run_tests {tests?}, lint, plan {text}, review {text}, reflect {text}, submit. "
            "A `search` must match exactly once. "
            + files_note
            + "Example:\n"
            + self.protocol_example(_EXAMPLE_ACTION)
        )

    def _render_observation(self, feedback: str | None) -> str:
        """The task with every file, when that fits ``observation_budget`` (what every
        built-in task shows); otherwise the task, a repository map and the files that
        fit (:meth:`_render_map`)."""
        whole = self._render_whole(feedback)
        if len(whole) <= self.observation_budget:
            return whole
        return self._render_map(feedback)

    def _render_whole(self, feedback: str | None) -> str:
        workspace = self.workspace
        parts = [self._task_section()]
        created = set(workspace.created_files())

        def label(path: str) -> str:
            if path in created:
                return "  (new, editable)"
            return "  (editable)" if path in workspace.editable else ""

        tree = "\n".join(f"  {path}{label(path)}" for path in sorted(workspace.current))
        tree += "".join(f"\n  {path}  (deleted)" for path in workspace.deleted_files())
        parts.append(f"## Files\n{tree}")
        for path in sorted(workspace.current):
            parts.append(f"### {path}\n```python\n{workspace.current[path]}```")
        remaining = self.max_steps - self._step_count
        parts.append(
            f"## Budget\nStep {self._step_count} of {self.max_steps}; {remaining} left. "
            + ("Your next action is graded as final." if remaining <= 1 else "")
        )
        changed = workspace.changed_files()
        if changed:
            parts.append("## Your changes so far\n```diff\n" + workspace.diff() + "```")
        if feedback:
            parts.append(f"## Result of your last action\n{feedback}")
        parts.append(self._protocol_section())
        return "\n\n".join(parts)

    def _budget_section(self) -> str:
        remaining = self.max_steps - self._step_count
        return f"## Budget\nStep {self._step_count} of {self.max_steps}; {remaining} left. " + (
            "Your next action is graded as final." if remaining <= 1 else ""
        )

    def _navigation_help(self) -> str:
        return (
            "Navigate the repository: list {path?} (a tree with sizes), read {path, start?, "
            "end?} (numbered lines), search {pattern, path?, regex?} (file:line hits). "
            "Example:\n```json\n" + json.dumps(_NAVIGATION_EXAMPLE) + "\n```"
        )

    def _focus_files(self, statement: str) -> list[str]:
        """The files the failure points at: the editable files the task statement
        names (its failing tests' frames, the bug report), the other files it names,
        then the other editable files."""
        files = self.workspace.current
        editable = self.workspace.editable
        named = mentioned_paths(statement, files)
        return list(
            dict.fromkeys(
                [
                    *(p for p in named if p in editable),
                    *named,
                    *sorted(p for p in files if p in editable),
                ]
            )
        )

    def _render_map(self, feedback: str | None) -> str:
        """An observation within ``observation_budget`` for a task too large to show
        whole: fixed parts first (step budget, protocol), then, each within a share of
        what is left, the last action's results, the task statement, the diff so far,
        the tree with sizes; then, in priority order (files the failure points at
        first), each file whole if it fits, else its outline if it is a focus file."""
        budget = self.observation_budget
        workspace = self.workspace
        files = workspace.current
        statement = self._task_section()
        diff = workspace.diff() if workspace.changed_files() else ""
        protocol = self._protocol_section() + "\n\n" + self._navigation_help()
        tree = list_tree(files, None, max_chars=budget // 3, label=self._file_label)
        tree += "".join(f"\n  {path}  (deleted)" for path in workspace.deleted_files())
        map_head = (
            f"## Repository map\nThe files exceed this observation's budget ({budget:,} "
            "characters): those that fit are shown whole, the ones the task points at are "
            "outlined (classes and functions with line numbers). `read` any file by line "
            "range, `search` for text, `list` a folder.\n"
        )
        sections = [
            Section(
                statement, 0.5, order=2, what="the task statement", how="`read` the files it names"
            ),
            Section(map_head + tree, 0.45, order=4, what="the tree", how="`list` a folder"),
            Section(self._budget_section(), None),
            Section(
                f"## Your changes so far\n```diff\n{diff}```" if diff else "",
                0.4,
                order=3,
                what="the diff",
                how="`read` the edited files",
            ),
            Section(
                f"## Result of your last action\n{feedback}" if feedback else "",
                0.75,
                order=1,
                what="the last action's results",
                how="repeat it with a smaller range",
            ),
            Section(protocol, None),
        ]
        fitted = fit_sections(sections, budget)
        left = budget - len("\n\n".join(fitted)) - 2
        focus = self._focus_files(statement)
        order = [*focus, *sorted(p for p in files if p not in focus)]
        shown: list[str] = []
        for path in order:
            block = f"### {path}\n```python\n{files[path]}```"
            if len(block) + 2 <= left:
                shown.append(block)
                left -= len(block) + 2
            elif path in focus and left > 400:
                text = render_outline(path, files[path], max_chars=min(left - 2, budget // 3))
                shown.append(text)
                left -= len(text) + 2
        parts = list(fitted)
        at = next((i + 1 for i, p in enumerate(parts) if p.startswith("## Repository map")), 1)
        parts[at:at] = shown
        return "\n\n".join(parts)
