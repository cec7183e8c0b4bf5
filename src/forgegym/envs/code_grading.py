"""How a code env grades (:class:`CodeGrading`, a base of
:class:`~forgegym.envs.code_env.CodeEnv`): each task by the grader of its kind
(:meth:`CodeGrading.grader_for`), completions as single-turn episodes, one task's
(:meth:`~CodeGrading.grade_completions`) or a whole batch's
(:meth:`~CodeGrading.grade_batch`), through one :func:`~forgegym.grading.batch.grade_many`
per grader."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from forgegym.core.actions import (
    ActionModel,
    EditAction,
    ParseResult,
    PlanAction,
    ReflectAction,
    ReviewAction,
    SubmitAction,
)
from forgegym.core.env import ForgeEnv
from forgegym.core.task import Task
from forgegym.grading.batch import Grader, Note, Submission, grade_many
from forgegym.grading.phases import phase
from forgegym.sandbox.workspace import Workspace

if TYPE_CHECKING:
    from forgegym.rewards import RewardBreakdown
    from forgegym.sandbox.runners import Runner

__all__ = ["CodeGrading", "claims_of"]


def claims_of(action: ActionModel) -> list[Any]:
    """The structured claim a family's ``edit``/``submit`` may carry (its ``diagnosis``
    field, e.g. FlakyRepair's root cause); graded by the family's grader."""
    claim = getattr(action, "diagnosis", None)
    return [] if claim is None else [claim]


class CodeGrading(ForgeEnv):
    """The grading of a code env's episodes and batches (docs/design/003)."""

    #: The family's grader, of every task that names no grading kind.
    grader: Grader
    #: The graders of the tasks that name a grading kind: kind -> grader.
    task_graders: dict[str, Grader]

    if TYPE_CHECKING:

        @property
        def runner(self) -> Runner: ...

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
                        diagnoses.extend(claims_of(action))
                    elif isinstance(action, SubmitAction):
                        diagnoses.extend(claims_of(action))
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
