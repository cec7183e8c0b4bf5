"""Grading of refactorings: gates first (compile, integrity, behaviour, public API),
then structure, lint, diff size and grounded notes.

Order of decisions:

1. **compile** (parent, static): an agent file that does not compile -> ``compile_error``.
2. **integrity** (parent, static; :mod:`.integrity`): monolith left in place, forwarding
   tricks, copies instead of moves, elided code, function explosion, the shared
   anti-hack scans -> ``hack_flagged``; sources over the parser's bounds ->
   ``unverifiable``. A gated submission runs nothing.
3. **behaviour** (sandbox): the hidden differential checks -- old module vs new on
   generated and property-style inputs, warnings included -- and the visible tests.
   **public API** (parent, libcst; :func:`.analysis.api_surface`): every public name at
   every old import path, with its signature. Any difference in either is *broken*:
   every credit is zeroed and the ``broken`` penalty puts the total at the ungated
   floor, below the no-op.
4. **structure** (:mod:`.structure`): the fraction of the asked-for shape that is
   there. Lint (new ruff findings), diff size (against the reference's) and a grounded
   ``review``/``reflect`` note are scaled by it, so only real progress earns style
   credit; ``noop`` penalises behaviour kept with no structure at all.

``success`` = no gate, behaviour and API kept, every structure requirement met.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from forgegym.envs.refactor.api_test import visible_verdicts
from forgegym.envs.refactor.bank import original_files
from forgegym.envs.refactor.checking import check_job, step_verdicts
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.envs.refactor.offload import shared_worker
from forgegym.envs.refactor.scan import scan_submission
from forgegym.envs.refactor.static import (
    analyse,
    api_score,
    grounded_note,
    lint_credit,
    present_targets,
    static_gates,
)
from forgegym.envs.refactor.structure import structure_score
from forgegym.grading.batch import Submission
from forgegym.grading.code_grader import CodeGrader, GradingState, Terms, check_timeout
from forgegym.rewards import RewardBreakdown, bounded
from forgegym.rewards.breakdown import TermKind
from forgegym.rewards.diff import diff_size_score, diff_stats
from forgegym.rewards.phases import phase
from forgegym.sandbox.jobs import CallResult, Job, PytestJob, PytestResult

__all__ = [
    "DEFAULT_WEIGHTS",
    "RefactorGrader",
    "analyse",
    "api_score",
    "grounded_note",
    "lint_credit",
    "scan_submission",
    "static_gates",
]

DEFAULT_WEIGHTS: dict[str, float] = {
    "structure": 6.0,
    "lint": 0.5,
    "diff": 0.5,
    "notes": 0.25,
    "behaviour": 0.0,
    "api": 0.0,
    "visible": 0.0,
    "noop": 1.0,
    "broken": 2.0,
}
_KINDS: dict[str, TermKind] = {"noop": "penalty", "broken": "penalty"}
#: ``Submission.grading_state`` keys: the pending worker analysis, then its answer.
_STATIC = "refactor-static"
_ANALYSIS = "refactor-analysis"
#: Seconds a submission's grading waits for the worker before analysing it itself.
OFFLOAD_TIMEOUT_S = 120.0

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _WorkerLint:
    """A lint credit the static-analysis worker computes (kept in ``GradingState.extra``)."""

    worker: Any  # the StaticWorker asked (abandoned if it does not answer in time)
    future: Future[Any]


def _answer_of(worker: Any, future: Future[Any]) -> Any:
    """``future``'s answer from the static-analysis ``worker``; a worker that does not
    answer within :data:`OFFLOAD_TIMEOUT_S` is abandoned (killed: every answer it still
    owes fails at once, so a batch waits for one timeout, not one per submission) and
    the ``TimeoutError`` raised (the caller computes in the parent)."""
    try:
        return future.result(timeout=OFFLOAD_TIMEOUT_S)
    except TimeoutError:
        worker.abandon()
        raise


class RefactorGrader(CodeGrader):
    """Implements :class:`forgegym.grading.batch.Grader` for ``Forge/Refactor-v0`` (the
    :class:`~forgegym.grading.code_grader.CodeGrader` template with its own static gates:
    every Python file compiles, the integrity rules hold).

    Args:
        weights: overrides of :data:`DEFAULT_WEIGHTS` (``ValueError`` names ``weights``).
        timeout_s: wall limit of each grading job.
        visible_tests: also run the visible tests at grading (a second sandbox job; they
            must pass). The hidden differential checks are strictly stronger, so
            validation may turn this off to halve its sandbox time.
    """

    name = "refactor"
    default_weights = DEFAULT_WEIGHTS
    term_kinds = _KINDS
    lints = True
    #: Optimised batches: the static analysis runs in a trusted worker process
    #: (:mod:`.offload`) while the parent drives the sandbox jobs.
    offload: bool = True

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        timeout_s: float = 10.0,
        *,
        visible_tests: bool = True,
    ):
        self.visible_tests = bool(visible_tests)
        super().__init__(weights)
        self.timeout_s = check_timeout(timeout_s)

    # ------------------------------------------------------------- helpers
    @staticmethod
    def _starting(sub: Submission) -> dict[str, str]:
        return {p: sub.task.files[p] for p in sub.task.editable_files}

    def _request(self, sub: Submission) -> dict[str, Any]:
        """:func:`analyse`'s input for ``sub``."""
        hidden = RefactorHidden.of(sub.task)
        return {
            "files": dict(sub.files),
            "starting": self._starting(sub),
            "original": original_files(sub.task),
            "integrity": hidden.integrity,
            "all_files": self._all_files(sub),
            "steps": [{"t": s["t"]} for seq in hidden.checks for s in seq],
            "api": hidden.api,
            "structure": hidden.structure,
        }

    def prepare(self, submissions: Sequence[Submission]) -> None:
        """Optimised batch grading: send every submission within the parent's limits to
        the static-analysis worker (:mod:`.offload`) at once; :meth:`static_gates` and
        :meth:`terms` take its answers (identical to computing them here, which they do
        when it has none)."""
        if not self.offload:
            return
        for sub in submissions:
            if bounded.files_problem(sub.files) is not None:
                continue  # gated in the parent at once
            worker = shared_worker(sub.task.task_id)
            if worker is None:
                return
            sub.grading_state[_STATIC] = (worker, worker.submit(self._request(sub)))

    def _analysis(self, sub: Submission) -> dict[str, Any] | None:
        """The worker's analysis of ``sub`` (``None``: none was asked for, or it failed)."""
        asked = sub.grading_state.pop(_STATIC, None)
        if asked is None:
            return None
        worker, future = asked
        try:
            with phase("scans"):
                answer = _answer_of(worker, future)
        except Exception as exc:  # noqa: BLE001 - computed here instead
            logger.warning("static-analysis worker failed, analysing in the parent: %r", exc)
            return None
        return answer if isinstance(answer, dict) else None

    def static_gates(self, sub: Submission) -> tuple[list[str], list[str]]:
        analysis = self._analysis(sub)
        if analysis is not None:
            sub.grading_state[_ANALYSIS] = analysis
            return list(analysis["gates"]), list(analysis["notes"])
        hidden = RefactorHidden.of(sub.task)
        return static_gates(
            sub.files, self._starting(sub), original_files(sub.task), hidden.integrity
        )

    def lint(self, sub: Submission) -> float:
        return lint_credit(self._starting(sub), sub.files)

    def start(self, submission: Submission, state: GradingState) -> None:
        """Lint in the static-analysis worker when it analysed this submission (its
        ruff runs are then off the parent), else in a background thread here."""
        analysed = submission.grading_state.get(_ANALYSIS)
        worker = shared_worker(submission.task.task_id) if analysed else None
        if worker is None:
            super().start(submission, state)
            return
        state.extra = _WorkerLint(
            worker,
            worker.submit(
                {"lint": {"starting": self._starting(submission), "files": submission.files}}
            ),
        )

    def lint_result(self, submission: Submission, state: GradingState) -> float:
        if isinstance(state.extra, _WorkerLint):
            try:
                with phase("lint"):
                    return float(_answer_of(state.extra.worker, state.extra.future))
            except Exception as exc:  # noqa: BLE001 - linted here instead
                logger.warning("static-analysis worker failed, linting in the parent: %r", exc)
                return self.lint(submission)
        return super().lint_result(submission, state)

    def _all_files(self, sub: Submission) -> dict[str, str]:
        task = sub.task
        files = {p: c for p, c in task.files.items() if p not in task.editable_files}
        files.update(sub.files)
        return files

    # ----------------------------------------------------------- the steps
    def sandbox_jobs(self, submission: Submission, state: GradingState) -> list[Job]:
        task = submission.task
        workdir = str(submission.materialise())
        checks = RefactorHidden.of(task).checks
        jobs: list[Job] = [check_job(checks, workdir, timeout_s=self.timeout_s)]
        if self.visible_tests and task.visible_test_files:  # a user's task may have none
            jobs.append(
                PytestJob(
                    workdir=workdir,
                    targets=list(task.visible_test_files),
                    expected_ids=list(task.visible_test_ids),
                    timeout_s=self.timeout_s,
                )
            )
        return jobs

    def terms(self, submission: Submission, results: Sequence[Any], state: GradingState) -> Terms:
        task = submission.task
        hidden = RefactorHidden.of(task)
        calls_result = results[0]
        assert isinstance(calls_result, CallResult)
        tests_result = results[1] if len(results) > 1 else None
        assert tests_result is None or isinstance(tests_result, PytestResult)
        files = self._all_files(submission)
        verdicts = step_verdicts(hidden.checks, hidden.expected, calls_result)
        steps = [s for seq in hidden.checks for s in seq]
        analysis = submission.grading_state.pop(_ANALYSIS, None)
        if analysis is not None and "present" in analysis:
            present: list[bool] = list(analysis["present"])
            api, api_missing = analysis["api"]
            structure, missed = analysis["structure"]
        else:
            present = present_targets(files, steps)
            api, api_missing = api_score(files, hidden.api, original_files(task))
            structure, missed = structure_score(files, hidden.structure)
        structure_reached = structure >= 1.0
        # A step on a path the refactoring creates counts once that path exists.
        kept = [
            ok
            for (ok, _), s, here in zip(verdicts, steps, present, strict=True)
            if here or not s.get("n")
        ]
        behaviour = sum(kept) / len(kept) if kept else 0.0
        warned = [w for _, w in verdicts if w is not None]
        if warned:
            total = len(hidden.structure) + 1
            met = structure * len(hidden.structure) + (1.0 if all(warned) else 0.0)
            structure = met / total
            if not all(warned):
                missed.append(f"asked-for warnings missing on {warned.count(False)} calls")
        visible, shown = 1.0, dict[str, bool]()
        if tests_result is not None:
            # The test of the API the refactoring creates counts once its path exists,
            # the kind's structure test once the structure is reached.
            shown = visible_verdicts(
                tests_result.verdicts,
                dict(task.files),
                task.visible_test_files,
                lambda target: present_targets(files, [{"t": target}])[0],
                structure_reached,
            )
            visible = sum(shown.values()) / len(shown) if shown else 0.0
        ok = behaviour >= 1.0 and api >= 1.0 and visible >= 1.0
        gain = structure if ok else 0.0
        stats = diff_stats(self._starting(submission), submission.files)
        diff = diff_size_score(stats, hidden.diff_budget)
        lint = self.lint_result(submission, state)
        grounded = any(
            grounded_note(n.text, hidden.focus)
            for n in submission.notes
            if n.kind in ("review", "reflect")
        )
        terms = {
            "structure": gain,
            "lint": lint * gain,
            "diff": diff * gain,
            "notes": gain if grounded else 0.0,
            "behaviour": behaviour,
            "api": api,
            "visible": visible,
            "noop": 1.0 if ok and structure == 0.0 else 0.0,
            "broken": 0.0 if ok else 1.0,
        }
        details = {
            "behaviour": f"{sum(kept)}/{len(kept)} hidden checks match the original",
            "api": "; ".join(api_missing[:3]),
            "structure": "missing: " + "; ".join(missed[:3]) if missed else "all present",
            "diff": f"{stats.lines_changed} lines",
            "visible": (
                f"{sum(shown.values())}/{len(shown)}"
                if tests_result is not None
                else "not run (visible_tests=False or none)"
            ),
        }
        notes = list(state.notes)
        if calls_result.status.value != "completed":
            notes.append(
                f"hidden checks run: {calls_result.status.value} {calls_result.detail}"[:300]
            )
        if not ok:
            notes.append("behaviour or public API changed: no credit")
        return Terms(terms, details, notes)

    @staticmethod
    def solved(breakdown: RewardBreakdown) -> bool:
        """No gate, behaviour and API kept, all structure present."""
        terms = breakdown.terms
        return (
            not breakdown.gates
            and "structure" in terms
            and terms["broken"].value == 0.0
            and terms["structure"].value >= 1.0
        )
