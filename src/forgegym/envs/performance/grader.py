"""Grading of performance submissions: gates, hidden correctness traces, then speed
measured by the trusted parent.

Order of decisions:

1. **gates** (parent, static): the module does not compile -> ``compile_error``; the
   shared source scans (exit calls, framework monkeypatching, always-equal classes) or
   :func:`~forgegym.envs.performance.scan.scan_candidate` (imports outside the allow-list,
   ``open``/``exec``/``getattr``, sandbox-escape attributes) -> ``hack_flagged``. A gated
   submission runs nothing.
2. **correctness**: hidden traces drawn from fresh secret seeds at grading time are
   replayed on the candidate and, in their own children, on the reference; the parent
   compares every output. Every measured run is a correctness check too (the child
   returns a digest of its outputs, compared with the reference's on the same seed).
   Fast but wrong scores no more than doing nothing. The measured runs are the
   grader's follow-up stage (:meth:`~forgegym.grading.code_grader.CodeGrader.follow_up_jobs`):
   planned (with fresh seeds) only once these traces pass, since a wrong submission's
   score does not depend on them.
3. **complexity**: the excess scaling exponent over the reference measured in the same
   batch (:mod:`~forgegym.envs.performance.measure`) and the excess CPU growth from n to
   16n (which constant per-call padding cannot hide) must stay below their limits, and
   no measured run may exceed its CPU budget. The measurement is adaptive: ``repeats``
   paired repetitions first, then more in follow-up rounds until the exponent's
   interval is within +-0.05 (or clear of the limit), up to ``max_repeats``; the gate
   reads the interval (:attr:`~forgegym.envs.performance.measure.Measurement.gated_exponent`).
4. **speed**: a capped log-speedup credit against the reference (full at or above
   0.95x the reference's speed).
5. ``noop`` penalises a submission that makes no progress on the task: one that is not
   correct, or (where the start state was already correct, i.e. the naive one) one that
   still fails the complexity gate, or one that leaves the module semantically
   unchanged (``is_noop``). So no hack built on the start state, and no rewrite
   that keeps it slow, beats submitting nothing.

``success`` = no gate, correct, complexity gate passed, speed at least
:data:`SUCCESS_RATIO` of the reference's, and progress (not ``noop``).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from forgegym.envs.performance.catalog import Structure, structure
from forgegym.envs.performance.hidden import PerformanceHidden
from forgegym.envs.performance.measure import (
    MAX_REPEATS,
    SCALES,
    Measurement,
    analyse,
    speed_credit,
)
from forgegym.envs.performance.scan import scan_submission
from forgegym.grading.batch import MAX_ROUNDS, Submission
from forgegym.grading.code_grader import CodeGrader, GradingState, Terms
from forgegym.rewards import RewardBreakdown, is_noop
from forgegym.sandbox.jobs import CallJob, CallResult, CallSpec, Job, Result, RunStatus
from forgegym.tasklib.values import same_value

if TYPE_CHECKING:
    from forgegym.rewards.antihack import HackFinding
    from forgegym.rewards.breakdown import TermKind

__all__ = ["DEFAULT_WEIGHTS", "SUCCESS_RATIO", "PerformanceGrader"]

DEFAULT_WEIGHTS: dict[str, float] = {
    "correct": 2.0,
    "complexity": 6.0,
    "speed": 2.0,
    "noop": 2.0,
}
_KINDS: dict[str, TermKind] = {"noop": "penalty"}
#: Success needs at least this speed ratio to the reference (well inside the noise of
#: repeated CPU-time measurements on a loaded machine; full credit needs 0.95).
SUCCESS_RATIO = 0.5
DRIVER = "forgegym.envs.performance.driver:run"
#: Hidden correctness traces: (structure size, operations).
CORRECTNESS_TRACES: tuple[tuple[int, int], ...] = ((3, 200), (16, 1000), (64, 3000))
#: Jobs of the first round: the hidden traces on the candidate, then on the reference.
_CHECKS = 2


@dataclass
class _Plan:
    """What the rounds planned, for :meth:`PerformanceGrader.terms` (``GradingState.extra``)."""

    correctness_seeds: list[int] = field(default_factory=list)
    #: (who, scale, repetition) of each measured job, in order.
    measured: list[tuple[str, int, int]] = field(default_factory=list)
    #: Repetitions planned so far (the next one's index).
    repetitions: int = 0


class PerformanceGrader(CodeGrader):
    """Implements :class:`forgegym.grading.batch.Grader` for ``Forge/Performance-v0`` (the
    :class:`~forgegym.grading.code_grader.CodeGrader` template: limits, compile and
    :func:`~forgegym.envs.performance.scan.scan_submission` gates; the hidden
    correctness traces as sandbox jobs; the measured runs as a follow-up stage, planned
    only once the traces pass; terms).

    Args:
        weights: overrides of :data:`DEFAULT_WEIGHTS`.
        repeats: paired repetitions of the first measured round (each with its own seed
            at every size). Follow-up rounds add more until the excess exponent's
            interval is settled (:attr:`~forgegym.envs.performance.measure.Measurement.settled`)
            or ``max_repeats`` are measured.
        max_repeats: the cap on repetitions (at least ``repeats``).
        cpu_budget_s: CPU limit of one measured candidate run; exceeding it fails the
            complexity gate (it is far above what a fast implementation needs).
        timeout_s: wall limit of one job.
        seed: seed of the hidden traces (default: fresh secret seeds per grading).
        measure: run the measured jobs (default). ``False`` runs only the hidden
            correctness traces, and the complexity gate reads as not passed: manifest
            building uses it for start states whose verdict is correctness alone.
    """

    name = "performance"
    default_weights = DEFAULT_WEIGHTS
    term_kinds = _KINDS
    #: A module that does not compile is not scanned.
    compile_error_ends_gates = True
    # "hack: <kind>" first: what forgegym.play.telemetry counts per kind.
    hack_note = "hack: {kind} at {where}: {detail}"

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        *,
        repeats: int = 5,
        max_repeats: int = MAX_REPEATS,
        cpu_budget_s: float = 3.0,
        timeout_s: float = 30.0,
        seed: int | None = None,
        measure: bool = True,
    ) -> None:
        super().__init__(weights)
        for name, value, low, high in (
            ("repeats", repeats, 1, 50),
            ("max_repeats", max_repeats, 1, 50),
            ("cpu_budget_s", cpu_budget_s, 0.1, 120.0),
            ("timeout_s", timeout_s, 1.0, 600.0),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} must be in [{low}, {high}], got {value!r}")
        for name, value in (("repeats", repeats), ("max_repeats", max_repeats)):
            if not isinstance(value, int):
                raise ValueError(f"{name} must be an int, got {value!r}")
        if max_repeats < repeats:
            raise ValueError(f"max_repeats must be at least repeats ({repeats}), got {max_repeats}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an int or None, got {seed!r}")
        self.repeats = repeats
        self.max_repeats = max_repeats
        self.cpu_budget_s = float(cpu_budget_s)
        self.timeout_s = float(timeout_s)
        self._seed = seed
        self._counter = 0
        self.measure = bool(measure)

    # ------------------------------------------------------------- helpers
    def _next_seed(self) -> int:
        if self._seed is None:
            return secrets.randbits(62)
        self._counter += 1
        return (self._seed * 1_000_003 + self._counter * 7919) % (1 << 62)

    def _call(
        self, s: Structure, seed: int, size: int, ops: int, profile: str, mode: str
    ) -> CallSpec:
        return CallSpec(
            target=DRIVER,
            args=[s.module, s.class_name, s.name, seed, size, ops, profile, mode],
        )

    @staticmethod
    def _plan(state: GradingState) -> _Plan:
        plan = state.extra
        assert isinstance(plan, _Plan), "sandbox_jobs records the plan"
        return plan

    @staticmethod
    def _fresh_dir(submission: Submission, who: str) -> str:
        """A fresh copy per job: nothing one run writes reaches another."""
        if who == "candidate":
            return str(submission.materialise())
        files: dict[str, str] = {}
        if who == "reference":  # a canary's oracle stands in for the reference
            oracle = PerformanceHidden.of(submission.task).oracle
            files = dict(oracle or submission.task.reference)
        directory = submission.workspace.materialise(files)
        submission.scratch.append(directory)
        return str(directory)

    # ----------------------------------------------------------- the steps
    def scan(self, submission: Submission) -> list[HackFinding]:
        return scan_submission(submission.task, submission.files)

    def sandbox_jobs(self, submission: Submission, state: GradingState) -> list[Job]:
        """The hidden correctness traces, on the candidate and on the reference; the
        measured runs follow in :meth:`follow_up_jobs` once they pass."""
        hidden = PerformanceHidden.of(submission.task)
        s = structure(hidden.structure)
        plan = _Plan(correctness_seeds=[self._next_seed() for _ in CORRECTNESS_TRACES])
        state.extra = plan
        jobs: list[Job] = []
        for who in ("candidate", "reference"):
            calls = [
                self._call(s, seed, size, ops, hidden.profile, "outputs")
                for seed, (size, ops) in zip(
                    plan.correctness_seeds, CORRECTNESS_TRACES, strict=True
                )
            ]
            jobs.append(
                CallJob(
                    workdir=self._fresh_dir(submission, who),
                    calls=calls,
                    timeout_s=self.timeout_s,
                    per_call_timeout_s=min(self.timeout_s, 10.0),
                    cpu_limit_s=min(self.timeout_s, 20.0),
                )
            )
        return jobs

    def follow_up_jobs(
        self, submission: Submission, results: Sequence[Result], state: GradingState
    ) -> list[Job]:
        """The measured runs, in rounds, only for a submission whose hidden correctness
        traces all match the reference's: a wrong submission scores the same whatever it
        measures (no complexity, speed or progress credit), so measuring it would only
        burn CPU. Round 1 measures ``repeats`` repetitions (null, reference and
        candidate); each later round adds reference and candidate repetitions until the
        excess exponent's interval is settled, a measured run failed or ran over its
        budget (the verdict is then known), or ``max_repeats`` is reached. Seeds are
        drawn when a round is planned, after the earlier results came in."""
        if not self.measure or state.stage >= MAX_ROUNDS:
            return []
        if not self._compare_checks(*self._checks(results))[0]:
            return []
        plan = self._plan(state)
        if state.stage == 0:
            return self._measured_jobs(submission, plan, self.repeats, with_null=True)
        if plan.repetitions >= self.max_repeats:
            return []
        measurement, correct, _ = self._measurement(submission, results, state)
        if not correct or measurement.candidate_timeouts or measurement.settled:
            return []
        if not measurement.complete:  # a reference run failed: more cannot fix that
            return []
        # Spread what the cap leaves over the rounds left, so the cap is reachable.
        rounds_left = MAX_ROUNDS - state.stage
        count = -(-(self.max_repeats - plan.repetitions) // rounds_left)
        return self._measured_jobs(submission, plan, count, with_null=False)

    def _measured_jobs(
        self, submission: Submission, plan: _Plan, count: int, *, with_null: bool
    ) -> list[Job]:
        hidden = PerformanceHidden.of(submission.task)
        s = structure(hidden.structure)
        # The null baseline (trace and harness overhead) only feeds the reported work
        # exponent, so the first round's repetitions are enough of it.
        who_list = ("null", "reference", "candidate") if with_null else ("reference", "candidate")
        jobs: list[Job] = []
        # Interleaved: every repetition runs its series side by side on one fresh seed at
        # each size, so load drifts hit all of them alike.
        for rep in range(plan.repetitions, plan.repetitions + count):
            for scale in SCALES:
                seed = self._next_seed()
                for who in who_list:
                    mode = "null" if who == "null" else "digest"
                    call = self._call(s, seed, s.size * scale, s.ops, hidden.profile, mode)
                    jobs.append(
                        CallJob(
                            workdir=self._fresh_dir(submission, who),
                            calls=[call],
                            timeout_s=self.timeout_s,
                            per_call_timeout_s=self.timeout_s,
                            cpu_limit_s=self.cpu_budget_s,
                        )
                    )
                    plan.measured.append((who, scale, rep))
        plan.repetitions += count
        return jobs

    def _measurement(
        self, submission: Submission, results: Sequence[Result], state: GradingState
    ) -> tuple[Measurement, bool, list[str]]:
        """The measurement from the results so far, whether the submission is still
        correct, and the notes (what failed)."""
        hidden = PerformanceHidden.of(submission.task)
        s = structure(hidden.structure)
        notes: list[str] = []
        correct, detail = self._compare_checks(*self._checks(results))
        if not correct:
            notes.append(detail)
        measurement = Measurement(sizes=[s.size * k for k in SCALES])
        cpu: dict[tuple[str, int, int], float] = {}
        digests: dict[tuple[int, int], dict[str, str]] = {}
        measured = self._plan(state).measured
        done = results[_CHECKS:]
        for (who, scale, rep), result in zip(measured, done, strict=True):
            assert isinstance(result, CallResult)
            outcome = result.outcome(0)
            timed_out = result.status is RunStatus.TIMEOUT or (
                not outcome.ok and outcome.error_type == "TimeoutError"
            )
            if who == "candidate" and timed_out:
                # Over the CPU budget or the per-call wall limit: too slow, not wrong.
                measurement.candidate_timeouts += 1
                continue
            if not outcome.ok or not isinstance(outcome.value, dict):
                if who == "candidate":
                    if correct:
                        correct = False
                        notes.append(
                            f"measured run at n={s.size * scale} failed: "
                            f"{outcome.error_type}: {outcome.message[:300]}"
                        )
                else:
                    measurement.reference_failures += 1
                continue
            cpu[(who, scale, rep)] = result.cpu_s
            digests.setdefault((scale, rep), {})[who] = str(outcome.value.get("digest", ""))
        for (scale, _rep), pair in sorted(digests.items()):
            if (
                "candidate" in pair
                and "reference" in pair
                and pair["candidate"] != pair["reference"]
            ):
                if correct:
                    notes.append(f"wrong results on a hidden measured trace at n={s.size * scale}")
                correct = False
        # A repetition is paired when reference and candidate both ran at every size:
        # only those enter the series, index r = the same seeds for both.
        reps = sorted({rep for (_, _, rep) in cpu})
        paired = [
            r
            for r in reps
            if all((who, k, r) in cpu for who in ("reference", "candidate") for k in SCALES)
        ]
        measurement.reference = [[cpu[("reference", k, r)] for r in paired] for k in SCALES]
        measurement.candidate = [[cpu[("candidate", k, r)] for r in paired] for k in SCALES]
        measurement.null = [
            [cpu[("null", k, r)] for r in reps if ("null", k, r) in cpu] for k in SCALES
        ]
        analyse(measurement)
        if measurement.reference_failures:
            notes.append(f"{measurement.reference_failures} reference/baseline run(s) failed")
        return measurement, correct, notes

    def terms(
        self, submission: Submission, results: Sequence[Result], state: GradingState
    ) -> Terms:
        hidden = PerformanceHidden.of(submission.task)
        detail = self._compare_checks(*self._checks(results))[1]
        measurement, correct, found = self._measurement(submission, results, state)
        notes = [*state.notes, *found]
        complexity = correct and measurement.complexity_ok
        speed = speed_credit(measurement.speed_ratio) if complexity else 0.0
        task = submission.task
        # An unchanged module is no progress whatever it scores: on a bank task it never
        # does (the manifest keeps only start states that fail), but a canary whose
        # tests and oracle follow the shown code's own bug would be "solved" by doing
        # nothing (design note 006, D3 for Performance).
        unchanged = is_noop({p: task.files[p] for p in task.editable_files}, submission.files)
        progress = correct and (complexity or not hidden.start_correct) and not unchanged
        values = {
            "correct": 1.0 if correct else 0.0,
            "complexity": 1.0 if complexity else 0.0,
            "speed": speed,
            "noop": 0.0 if progress else 1.0,
        }
        details = {
            "correct": "all hidden traces match the reference" if correct else detail or "wrong",
            "complexity": measurement.summary(),
            "speed": f"{measurement.speed_ratio:.2f}x the reference" if complexity else "",
        }
        return Terms(values, details, [*notes, f"measurement: {measurement.summary()}"])

    @staticmethod
    def _checks(results: Sequence[Result]) -> tuple[CallResult, CallResult]:
        """The hidden-trace results of the candidate and of the reference."""
        cand, ref = results[0], results[1]
        assert isinstance(cand, CallResult) and isinstance(ref, CallResult)
        return cand, ref

    @staticmethod
    def _compare_checks(cand: CallResult, ref: CallResult) -> tuple[bool, str]:
        for index in range(len(CORRECTNESS_TRACES)):
            expected = ref.outcome(index)
            got = cand.outcome(index)
            if not expected.ok or not isinstance(expected.value, dict):
                return False, f"reference check failed ({expected.error_type}); cannot verify"
            if not got.ok or not isinstance(got.value, dict):
                message = got.message.strip().splitlines()[0][:300] if got.message else ""
                return False, f"hidden trace {index + 1}: {got.error_type}: {message}"
            want, have = expected.value.get("outputs", []), got.value.get("outputs")
            if not isinstance(have, list) or len(have) != len(want):
                return False, f"hidden trace {index + 1}: wrong number of results"
            for op, (a, b) in enumerate(zip(have, want, strict=True)):
                if (
                    not same_value(a, b)
                    or type(a) is not type(b)
                    and not (isinstance(a, (int, float)) and isinstance(b, (int, float)))
                ):
                    return False, (
                        f"hidden trace {index + 1}: operation #{op} returned "
                        f"{str(a)[:80]}, expected {str(b)[:80]}"
                    )
        return True, ""

    @staticmethod
    def solved(breakdown: RewardBreakdown) -> bool:
        terms = breakdown.terms
        if breakdown.gates or "complexity" not in terms:
            return False
        if terms["correct"].value < 1.0 or terms["complexity"].value < 1.0:
            return False
        if "noop" in terms and terms["noop"].value > 0.0:  # no progress (see ``terms``)
            return False
        return terms["speed"].value >= speed_credit(SUCCESS_RATIO) - 1e-12
