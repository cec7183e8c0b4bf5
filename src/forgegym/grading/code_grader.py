"""The code-family grading template: static gates → sandbox jobs → follow-up jobs →
terms → compose.

Every code family grades the same way: the trusted parent first checks what it can
without running anything (the parent's limits, compilation, the family's anti-hack
scanners), and a gated submission runs nothing; otherwise the family's sandbox jobs
run (batched across a GRPO group by :func:`~forgegym.grading.batch.grade_many`), then
any follow-up jobs the family plans from their results (e.g. Performance measures
speed only once its hidden correctness traces passed), and all the results become
named reward terms, composed with the family's weights.
:class:`CodeGrader` implements :class:`~forgegym.grading.batch.Grader` as that
template; a family fills in the steps::

    class MyGrader(CodeGrader):
        name = "mine"                       # its key in Submission.grading_state
        default_weights = {"hidden": 1.0, "lint": 0.1}
        lints = True                        # lint in the background once gates pass

        def scan(self, submission):         # the family's anti-hack scanner
            return scan_submission(submission.task, submission.files)

        def sandbox_jobs(self, submission, state):
            return [call_job(..., str(submission.materialise()), self.timeout_s)]

        def terms(self, submission, results, state):
            rate = ...
            return Terms({"hidden": rate, "lint": self.lint_result(submission, state) * rate})

:meth:`CodeGrader.static_gates` has the shared default (limits → compile → scan);
a family with other gates overrides it. A family whose later jobs depend on earlier
results implements :meth:`CodeGrader.follow_up_jobs` (the default plans none)::

        def follow_up_jobs(self, submission, results, state):
            if state.stage > 0 or not passed(results):  # one follow-up stage, if earned
                return []
            return [measure_job(...)]

Every :class:`CodeGrader` is a :class:`~forgegym.grading.batch.StagedGrader`:
``grade_many`` asks each submission for follow-ups after each of its rounds (batched
per round on the reference path, without a barrier between rounds on the optimised
one), so a staged family needs nothing special from the batch path.

Two more steps let the optimised path run fewer jobs for the same breakdowns:
:meth:`CodeGrader.result_gate` (a gate one job's result fires on its own, e.g. a run
the sandbox refused gates ``unsafe``: it decides the breakdown, so the submission's
later jobs are cancelled, :meth:`CodeGrader.cutoff`) and ``shares_runs = True`` (the
gates and jobs read nothing of a submission but its task, files and deletions, so
submissions of one patch with other claims or notes share one run of the jobs,
:meth:`CodeGrader.execution_key`, and each is scored on its own)::

        shares_runs = True

        def result_gate(self, submission, result):
            reason = refused(result.detail)
            return None if reason is None else ResultGate("unsafe", f"sandbox: {reason}")
"""

from __future__ import annotations

import hashlib
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from forgegym.grading.batch import Submission
from forgegym.rewards import RewardBreakdown, bounded, compose, merge_weights
from forgegym.sandbox.jobs import Job, Result

if TYPE_CHECKING:
    from forgegym.rewards.antihack import HackFinding
    from forgegym.rewards.breakdown import TermKind

__all__ = [
    "CodeGrader",
    "GradingState",
    "ResultGate",
    "Terms",
    "check_timeout",
    "HACK_NOTE",
    "gate_hack_findings",
    "hack_gate",
    "limit_and_compile_gates",
]


@dataclass
class GradingState:
    """What ``jobs`` computed for ``score`` (kept on the submission, nothing outlives it)."""

    gates: list[str]
    notes: list[str]
    #: The background lint score (graders with ``lints = True``).
    lint: Future[float] | None = None
    #: Whatever else the family's ``sandbox_jobs`` records for its ``terms``.
    extra: Any = None
    #: Follow-up rounds planned so far: 0 while only the sandbox jobs were planned;
    #: :meth:`CodeGrader.more_jobs` counts each non-empty :meth:`~CodeGrader.follow_up_jobs`.
    stage: int = 0
    #: The follow-up step concluded (``follow_up_jobs`` returned ``[]``), or there is
    #: nothing to follow up (a gated submission, a state built at ``score`` time).
    settled: bool = False


@dataclass
class Terms:
    """A family's reward terms for one submission, with details and the final notes."""

    values: dict[str, float]
    details: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Terms without ground truth for this task (proximity or diagnosis in a user's
    #: repository): recorded with weight 0, so they are left out and the remaining
    #: credits renormalised (a perfect submission still scores 1.0).
    not_applicable: frozenset[str] = frozenset()


class ResultGate(NamedTuple):
    """A gate one job's result fires on its own (:meth:`CodeGrader.result_gate`)."""

    gate: str
    note: str


def check_timeout(timeout_s: Any, argument: str = "timeout_s") -> float:
    """A job wall limit in (0, 600] seconds, else ``ValueError`` naming ``argument``."""
    if (
        isinstance(timeout_s, bool)
        or not isinstance(timeout_s, (int, float))
        or not (0 < timeout_s <= 600)
    ):
        raise ValueError(f"{argument} must be in (0, 600], got {timeout_s!r}")
    return float(timeout_s)


def hack_gate(findings: Iterable[HackFinding]) -> str | None:
    """The gate anti-hack findings fire: ``unverifiable`` when one says the parent
    cannot verify the source, ``hack_flagged`` for any other, ``None`` for none."""
    kinds = [f.kind for f in findings]
    if not kinds:
        return None
    return "unverifiable" if "unverifiable" in kinds else "hack_flagged"


HACK_NOTE = "hack: {kind} at {where} ({detail})"
"""The default note an anti-hack finding leaves (``str.format`` over its fields)."""


def gate_hack_findings(
    gates: list[str],
    notes: list[str],
    findings: Sequence[HackFinding],
    *,
    note: str = HACK_NOTE,
    limit: int = 5,
) -> tuple[list[str], list[str]]:
    """``gates`` and ``notes`` (updated in place and returned) with what anti-hack
    ``findings`` add: their gate (:func:`hack_gate`) listed first and a ``note`` for each
    of the first ``limit`` of them; nothing when there are none. The gate-to-notes step
    of :class:`CodeGrader`'s default gates, shared with graders that are not one."""
    gate = hack_gate(findings)
    if gate is not None:
        gates.insert(0, gate)
        notes.extend(note.format(**f.model_dump(), where=f.where) for f in findings[:limit])
    return gates, notes


def limit_and_compile_gates(
    submission: Submission, compiled_paths: Iterable[str]
) -> tuple[list[str], list[str], bool]:
    """The first static gates of a code submission: ``unverifiable`` when the changed
    files are over the parent's limits (``final``: nothing else may look at them), else
    ``compile_error`` for the first of ``compiled_paths`` that does not compile.
    Returns ``(gates, notes, final)``."""
    task = submission.task
    changed = {p: c for p, c in submission.files.items() if c != task.files.get(p)}
    problem = bounded.files_problem(changed)
    if problem is not None:  # over the parent's limits: cannot verify, nothing runs
        return ["unverifiable"], [f"cannot verify {problem}"], True
    for path in compiled_paths:
        try:
            compile(submission.files.get(path, ""), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return ["compile_error"], [f"{path} does not compile: {exc}"], False
    return [], [], False


class CodeGrader(ABC):
    """The :class:`~forgegym.grading.batch.Grader` template of the code families.

    Args:
        weights: overrides of ``default_weights`` (``ValueError`` names ``weights``).
    """

    #: The grader's key in ``Submission.grading_state``.
    name: ClassVar[str]
    #: Term name -> weight (what ``weights=`` overrides).
    default_weights: ClassVar[Mapping[str, float]]
    #: Term kinds other than "credit" (penalties, shaping).
    term_kinds: ClassVar[Mapping[str, TermKind]] = {}
    #: Lint in a background thread once the gates pass (implement :meth:`lint`).
    lints: ClassVar[bool] = False
    #: Default gates: stop at a compile error (``True``) or also scan (``False``: a hack
    #: that does not compile still gates as a hack).
    compile_error_ends_gates: ClassVar[bool] = False
    #: Default gates: the note a finding leaves.
    hack_note: ClassVar[str] = HACK_NOTE
    #: Default gates: how many findings leave a note.
    hack_notes: ClassVar[int] = 5
    #: Submissions with one task, files and deletions share one run of the jobs on the
    #: optimised path (:meth:`execution_key`). Set it only when the gates, the sandbox
    #: jobs and the follow-ups read nothing else of a submission (its claims, notes and
    #: step counts are read by :meth:`terms` alone), and their jobs are a function of
    #: what they read (no fresh random seeds).
    shares_runs: ClassVar[bool] = False

    def __init__(self, weights: Mapping[str, float] | None = None) -> None:
        self.weights = merge_weights(self.default_weights, weights, argument="weights")
        self._lint_pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    # ------------------------------------------------------- the family's steps
    def scan(self, submission: Submission) -> list[HackFinding]:
        """The family's anti-hack findings (bounded: over a limit, ``unverifiable``)."""
        return []

    def compiled_paths(self, submission: Submission) -> Sequence[str]:
        """Files the default gates compile (the task's editable files)."""
        return submission.task.editable_files

    def static_gates(self, submission: Submission) -> tuple[list[str], list[str]]:
        """Gates and notes decided without running anything. Default: the parent's
        limits on the changed files (``unverifiable``: nothing else is looked at), the
        first file of :meth:`compiled_paths` that does not compile (``compile_error``),
        then :meth:`scan` (``hack_flagged`` / ``unverifiable``, listed first)."""
        gates, notes, final = limit_and_compile_gates(submission, self.compiled_paths(submission))
        if final or (gates and self.compile_error_ends_gates):
            return gates, notes
        return self.gate_findings(gates, notes, self.scan(submission))

    def gate_findings(
        self, gates: list[str], notes: list[str], findings: Sequence[HackFinding]
    ) -> tuple[list[str], list[str]]:
        """``gates`` and ``notes`` with what anti-hack ``findings`` add: their gate
        (:func:`hack_gate`) listed first, a :attr:`hack_note` for each of the first
        :attr:`hack_notes` of them (:func:`gate_hack_findings`; for a family's own
        :meth:`static_gates`)."""
        return gate_hack_findings(
            gates, notes, findings, note=self.hack_note, limit=self.hack_notes
        )

    def lint(self, submission: Submission) -> float:
        """The lint credit in [0, 1] (graders with ``lints = True``)."""
        raise NotImplementedError(f"{type(self).__name__} sets lints but has no lint()")

    def start(self, submission: Submission, state: GradingState) -> None:
        """Work begun once the gates passed, before the jobs run: by default the
        background lint (``lints = True``)."""
        if self.lints and state.lint is None:
            state.lint = self._pool().submit(self.lint, submission)

    @abstractmethod
    def sandbox_jobs(self, submission: Submission, state: GradingState) -> list[Job]:
        """The runner jobs of an ungated submission (``state.extra`` may record what
        :meth:`terms` needs to read their results)."""

    def follow_up_jobs(
        self, submission: Submission, results: Sequence[Result], state: GradingState
    ) -> list[Job]:
        """Jobs whose existence depends on earlier results, or ``[]`` when grading needs
        nothing more (the default: no follow-ups).

        Asked once the sandbox jobs' results are in (``state.stage == 0``) and again
        after each non-empty follow-up round (``state.stage`` is the number of those
        rounds), with ``results`` this submission's results so far, in order; the
        results of the jobs returned here follow them in what :meth:`terms` gets. It must
        decide from ``results`` alone (it may be asked again at ``score`` time, when a
        caller skipped the step: returning jobs then refuses the score). At most
        :data:`~forgegym.grading.batch.MAX_ROUNDS` follow-up rounds run."""
        return []

    def result_gate(self, submission: Submission, result: Result) -> ResultGate | None:
        """A gate ``result`` (one of the submission's jobs') fires whatever the others
        say, e.g. a run the sandbox refused (``unsafe``); ``None`` (the default) for
        none. The first such result, in job order, decides the breakdown (its gate and
        note) before any term is read, so the later jobs are irrelevant
        (:meth:`cutoff`). It must decide from ``result`` alone."""
        return None

    @abstractmethod
    def terms(
        self, submission: Submission, results: Sequence[Result], state: GradingState
    ) -> Terms:
        """The reward terms of an ungated submission from its jobs' results."""

    # ------------------------------------------------------------- helpers
    def lint_result(self, submission: Submission, state: GradingState) -> float:
        """The background lint score (computed now when it was never started)."""
        return state.lint.result() if state.lint is not None else self.lint(submission)

    def _pool(self) -> ThreadPoolExecutor:
        # Ruff runs in the parent; overlapping it with the sandbox jobs keeps grading
        # latency at max(jobs, lint) instead of their sum.
        with self._pool_lock:
            if self._lint_pool is None:
                self._lint_pool = ThreadPoolExecutor(
                    max_workers=4, thread_name_prefix=f"fg-{self.name}-lint"
                )
            return self._lint_pool

    # ------------------------------------------------------------ the template
    def jobs(self, submission: Submission) -> list[Job]:
        gates, notes = self.static_gates(submission)
        state = GradingState(gates, notes, settled=bool(gates))
        submission.grading_state[self.name] = state
        if gates:
            return []
        self.start(submission, state)
        return self.sandbox_jobs(submission, state)

    def more_jobs(self, submission: Submission, results: Sequence[Result]) -> list[Job]:
        """The :class:`~forgegym.grading.batch.StagedGrader` step: the next round of
        :meth:`follow_up_jobs` (``[]`` for a gated or settled submission)."""
        state = submission.grading_state.get(self.name)
        if not isinstance(state, GradingState) or state.settled:
            return []
        jobs = self.follow_up_jobs(submission, results, state)
        if jobs:
            state.stage += 1
        else:
            state.settled = True
        return jobs

    # The optional hooks of the optimised ``grade_many`` (the reference path ignores
    # them; see :class:`~forgegym.grading.batch.Grader`).
    def execution_key(self, submission: Submission) -> str | None:
        """With :attr:`shares_runs`: a hash of what the gates and jobs read (the task,
        the files and the deletions); submissions with one key share one run of the
        jobs, each scored on its own. ``None`` (no sharing) otherwise."""
        if not self.shares_runs:
            return None
        payload = {
            "task": submission.task.task_id,
            "files": sorted(submission.files.items()),
            "deleted": sorted(submission.deleted),
        }
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def cutoff(self, submission: Submission, result: Result) -> bool:
        """Whether ``result`` fires a :meth:`result_gate`: the breakdown is then decided,
        and the submission's later jobs are cancelled (no follow-ups are planned)."""
        return self.result_gate(submission, result) is not None

    def score(self, submission: Submission, results: Sequence[Result]) -> RewardBreakdown:
        state = submission.grading_state.pop(self.name, None)
        if state is None:  # score without jobs (direct use): compute the gates now
            gates, notes = self.static_gates(submission)
            state = GradingState(gates, notes, settled=True)
        if state.gates:
            return compose({}, self.weights, gates=state.gates, notes=state.notes)
        for result in results:
            fired = self.result_gate(submission, result)
            if fired is not None:
                notes = [*state.notes, fired.note]
                return compose({}, self.weights, gates=[fired.gate], notes=notes)
        if not state.settled and self.follow_up_jobs(submission, results, state):
            raise RuntimeError(
                f"{type(self).__name__} has follow-up jobs that never ran: grade through "
                "forgegym.grading.batch.grade_many (or call more_jobs until it returns [])"
            )
        terms = self.terms(submission, results, state)
        weights = self.weights
        if terms.not_applicable:
            weights = {k: 0.0 if k in terms.not_applicable else w for k, w in weights.items()}
        return compose(
            terms.values,
            weights,
            kinds=self.term_kinds,
            details=terms.details,
            notes=terms.notes,
        )

    def close(self) -> None:
        """Stop the lint threads (called by the environment's ``close``)."""
        with self._pool_lock:
            if self._lint_pool is not None:
                self._lint_pool.shutdown(wait=False, cancel_futures=True)
                self._lint_pool = None
