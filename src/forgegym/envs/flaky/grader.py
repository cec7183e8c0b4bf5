"""FlakyRepair grading: chaos reruns, regression, power check, anti-hack, diagnosis.

:class:`FlakyRepairGrader` is a :class:`~forgegym.grading.code_grader.CodeGrader`: the shared
limits and compile gates and the family's scan decide first; an ungated submission's
``sandbox_jobs`` are, in order: the ``reruns`` chaos reruns of the target (rerun 0 is
the calm full-file run, also used for regression) and the power check (the submitted
tests against the scenario's mutant of the source under test, with rerun 0's
parameters; in a repository, every mutant the pristine test caught). ``terms`` turns
their results into the reward terms.

Integrity: where the fault lives in the code under test, the reruns run the *pristine*
tests against the submitted source (:func:`trusted_tests`); the power check cannot be
told from rerun 0 but by the mutated source bytes; a run whose code was caught forging
its verdicts or breaking the sandbox's runtime policy gates the submission (``unsafe``);
and every credit term for the patch (power, proximity, entropy, diff) is scaled by the
stability gain, while an edit that fixes nothing pays the no-op penalty like no edit.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from forgegym.envs.flaky.antihack import (
    hack_findings,
    scan_chaos_tamper,
    scan_loosened_comparisons,
    scan_wait_inflation,
)
from forgegym.envs.flaky.chaos import ChaosRun, make_schedule
from forgegym.envs.flaky.claims import check_diagnoses
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.runs import (
    RerunOutcome,
    chaos_jobs,
    consistency_job,
    consistency_verdicts,
    failure_entropy,
    rerun_outcomes,
    target_passed,
)
from forgegym.envs.flaky.scan import scan_paths, scan_submission
from forgegym.envs.flaky.variants import new_rng, variant
from forgegym.envs.flaky.watching import TargetJudge
from forgegym.grading.batch import Submission
from forgegym.grading.code_grader import (
    CodeGrader,
    GradingState,
    ResultGate,
    Terms,
    limit_and_compile_gates,
)
from forgegym.rewards import RewardBreakdown, bounded, brier_reward, regression
from forgegym.rewards.breakdown import TermKind
from forgegym.rewards.diff import diff_size_score, diff_stats, is_noop
from forgegym.rewards.power import POWER_THRESHOLD as SHARED_POWER_THRESHOLD
from forgegym.rewards.power import power_score
from forgegym.sandbox.jobs import CallResult, Job, PytestResult, Result
from forgegym.sandbox.protocol import refused

__all__ = [
    "DEFAULT_WEIGHTS",
    "trusted_tests",
    "FlakyGrader",
    "FlakyRepairGrader",
    "POWER_THRESHOLD",
    "PowerReference",
    "RerunOutcome",
    "changed_functions",
    "hack_findings",
    "chaos_jobs",
    "rerun_outcomes",
    "scan_chaos_tamper",
    "scan_loosened_comparisons",
    "scan_submission",
    "scan_wait_inflation",
    "power_verdict",
    "solved",
]


DEFAULT_WEIGHTS: dict[str, float] = {
    "stability": 3.0,
    "solved": 2.0,
    "power": 1.0,
    "proximity": 0.5,
    "entropy": 0.25,
    "diagnosis": 0.75,
    "calibration": 0.25,
    "diff": 0.25,
    "regression": 2.0,
    "noop": 1.0,
    "power_lost": 3.0,
    "repeat_diagnosis": 0.25,
    "hallucination": 0.5,
}
_KINDS: dict[str, TermKind] = {
    "power_lost": "penalty",
    "repeat_diagnosis": "penalty",
    "hallucination": "penalty",
}


def changed_functions(before: Mapping[str, str], after: Mapping[str, str]) -> set[str]:
    """``path::qualname`` of every top-level function/class/method whose source changed
    (``path::<module>`` for module-level statements)."""

    def index(source: str) -> dict[str, str] | None:
        tree = bounded.parse_or_none(source)
        if tree is None:
            return None
        found: dict[str, str] = {}
        module_level: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[node.name] = ast.dump(node)
            elif isinstance(node, ast.ClassDef):
                found[node.name] = ast.dump(node)
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        found[f"{node.name}.{item.name}"] = ast.dump(item)
            else:
                module_level.append(ast.dump(node))
        found["<module>"] = "\n".join(module_level)
        return found

    changed: set[str] = set()
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path, ""), after.get(path, "")
        if old == new or not path.endswith(".py"):
            continue
        a, b = index(old), index(new)
        if a is None or b is None:
            changed.add(f"{path}::<module>")
            continue
        for name in set(a) | set(b):
            if a.get(name) != b.get(name):
                changed.add(f"{path}::{name}")
    return changed


def _split(location: str) -> tuple[str, str]:
    path, _, func = location.partition("::")
    return path.strip(), func.strip()


def location_matches(claimed: str, truth: str) -> bool:
    """``path::func`` equality, accepting ``Class.method`` vs ``method`` either way."""
    cp, cf = _split(claimed)
    tp, tf = _split(truth)
    if not cf or cp != tp:
        return False
    return cf == tf or cf.endswith("." + tf) or tf.endswith("." + cf)


#: The share of the mutants the original test caught that a repaired test must still
#: catch in a user's repository (calibrated on the corpus's tuning half, docs/flaky.md):
#: a fix that passes an explicit argument where the test relied on a default may rightly
#: stop exercising one mutant of five; a test that stops checking what it checked loses
#: more. With three or fewer mutants, one miss loses power.
# One threshold for the generated bank and repository mode (forgegym.rewards.power).
POWER_THRESHOLD = SHARED_POWER_THRESHOLD


def power_verdict(
    required: int, missed: int, threshold: float = POWER_THRESHOLD
) -> tuple[float, bool]:
    """``(fraction still caught, power holds)`` when ``missed`` of the ``required``
    mutants the original test caught now pass (``required >= 1``)."""
    if required < 1 or not 0 <= missed <= required:
        raise ValueError(
            f"power_verdict: need 0 <= missed <= required >= 1, got {missed}/{required}"
        )
    score = power_score([False] * missed + [True] * (required - missed), threshold)
    return score.fraction, score.ok


def solved(breakdown: RewardBreakdown) -> bool:
    """Solved = no gate fired and the chaos pass rate reached 1.0 (the ``solved`` term)."""
    term = breakdown.terms.get("solved")
    return not breakdown.gates and term is not None and term.value >= 1.0


def trusted_tests(task: Any) -> dict[str, str]:
    """The pristine test files when the fault lives in the code under test (the task's
    location is not a test file): the reruns then judge the submitted source with the
    trusted test, so nothing the agent wrote into a test can speak for the verdict.
    Empty (the submitted tests are run) when the fault is in a test, or unknown."""
    hidden = FlakyHidden.of(task)
    path = hidden.location.partition("::")[0]
    test_paths = hidden.test_paths
    if not path or path in test_paths:
        return {}
    return {p: task.files[p] for p in test_paths if p in task.files}


@dataclass(frozen=True)
class PowerReference:
    """What the pristine test catches in a user's repository: ``run`` is the index of a
    rerun of the schedule in which the pristine target passed (the condition the
    mutants run under) and ``caught`` the indices of ``FlakyHidden.repo_mutants`` that made
    it fail there. ``run`` is ``None`` when the pristine target never passed."""

    run: int | None
    caught: tuple[int, ...]


class FlakyRepairGrader(CodeGrader):
    """The FlakyRepair :class:`~forgegym.grading.batch.Grader` (the
    :class:`~forgegym.grading.code_grader.CodeGrader` template: limits, compile and
    :func:`scan_submission` gates; the chaos reruns, the scenario's mutant and a
    repository's caught mutants as sandbox jobs; a refused run gates ``unsafe``
    (:meth:`result_gate`); submissions of one patch share one run of the jobs).

    Args:
        reruns: chaos reruns per pass-rate estimate.
        schedule_seed: fixed schedule seed (``None``: each task's own).
        weights: overrides of :data:`DEFAULT_WEIGHTS`.
        baseline: ``(task, reruns, seed) -> pass rate`` of the pristine state.
        timeout_s: wall limit of one rerun.
        power_reference: ``(task, reruns, seed) -> PowerReference`` for repository tasks
            (which mutants the pristine test catches); ``None``: no repository power.
    """

    name = "flaky"
    default_weights = DEFAULT_WEIGHTS
    term_kinds = _KINDS
    # "hack: <kind>" first: what forgegym.play.telemetry counts per kind.
    hack_note = "hack: {kind} at {where}: {detail}"
    hack_notes = 8
    # The gates and jobs read the task, files and deletions only; the diagnoses are
    # read by ``terms`` alone, so completions of one patch share one run.
    shares_runs = True

    def __init__(
        self,
        *,
        reruns: int,
        schedule_seed: int | None,
        weights: Mapping[str, float] | None,
        baseline: Callable[[Any, int, int], float],
        timeout_s: float = 10.0,
        power_reference: Callable[[Any, int, int], PowerReference] | None = None,
    ) -> None:
        super().__init__(weights)
        self.reruns = reruns
        self.schedule_seed = schedule_seed
        self.baseline = baseline
        self.timeout_s = timeout_s
        self.power_reference = power_reference

    def seed_for(self, task: Any) -> int:
        return (
            FlakyHidden.of(task).schedule_seed if self.schedule_seed is None else self.schedule_seed
        )

    def schedule(self, task: Any) -> list[ChaosRun]:
        """The rerun schedule of ``task``: the one place that decides which reruns run
        (a repository task gets the extended chaos: hash seeds, threads, CPU pressure)."""
        return make_schedule(
            self.seed_for(task), self.reruns, extended=FlakyHidden.of(task).extended_chaos
        )

    def _repo_power(self, task: Any) -> PowerReference | None:
        if not FlakyHidden.of(task).repo_mutants or self.power_reference is None:
            return None
        return self.power_reference(task, self.reruns, self.seed_for(task))

    def _required(self, ref: PowerReference, submission: Submission) -> tuple[int, ...]:
        """The mutants ``ref`` caught that the submission's tests must still catch: all
        but those of a clock/random seam the submitted tests now replace with a fake
        (:func:`~forgegym.envs.flaky.repo.excused_mutants`)."""
        from forgegym.envs.flaky.repo import MutantSpec, excused_mutants

        task = submission.task
        specs = [MutantSpec.from_json(m) for m in FlakyHidden.of(task).repo_mutants or []]
        excused = excused_mutants(specs, task.files, submission.files, scan_paths(task))
        return tuple(i for i in ref.caught if i not in excused)

    # ----------------------------------------------------------- the steps
    def compiled_paths(self, submission: Submission) -> Sequence[str]:
        """Every Python file of the submission (edited, untouched or created)."""
        return [p for p in submission.files if p.endswith(".py")]

    def static_gates(self, submission: Submission) -> tuple[list[str], list[str]]:
        """The shared limits and compile gates, then :func:`scan_submission`. In a
        repository with mutants the scan is lenient first (the power check only ever
        lifts findings: a changed expected value it judges), so a submission flagged
        even then is gated without its power reference (a run per mutant) being
        computed; otherwise strict unless the mutants will judge it (it compiles and the
        pristine test caught some)."""
        gates, notes, final = limit_and_compile_gates(submission, self.compiled_paths(submission))
        if final:
            return gates, notes
        task = submission.task
        may_check = bool(FlakyHidden.of(task).repo_mutants) and self.power_reference is not None
        findings = scan_submission(task, submission.files, power_checked=may_check)
        if may_check and not findings:
            ref = None if gates else self._repo_power(task)
            if ref is None or ref.run is None or not ref.caught:
                findings = scan_submission(task, submission.files, power_checked=False)
        return self.gate_findings(gates, notes, findings)

    def sandbox_jobs(self, submission: Submission, state: GradingState) -> list[Job]:
        """The chaos reruns (pristine tests where the fault is in the code under test),
        the scenario's mutant under rerun 0, and a repository's caught mutants applied
        to the submitted source under the rerun in which the pristine test passed."""
        task = submission.task
        hidden = FlakyHidden.of(task)
        test_ids = list(hidden.test_ids)
        options = hidden.run_options
        schedule = self.schedule(task)
        jobs: list[Job] = []
        for index, workdir in enumerate(self._workdirs(submission, trusted_tests(task), schedule)):
            jobs.extend(
                chaos_jobs(
                    workdir,
                    hidden.target,
                    test_ids,
                    hidden.test_paths,
                    schedule[index : index + 1] if len(schedule) > 1 else schedule,
                    self.timeout_s,
                    options,
                )
            )
        mutant = hidden.mutant
        if mutant:
            # The submitted tests against a bug-injected version of the source under test.
            # Indistinguishable from rerun 0: the same paths, names and layout (each job
            # gets a fresh copy at the same place), the same seed, order, hash seed, TZ,
            # locale and clock; only the bytes of the source under test differ.
            (mutant_dir,) = self._workdirs(submission, dict(mutant), schedule[:1])
            jobs.extend(
                chaos_jobs(
                    mutant_dir,
                    hidden.target,
                    test_ids,
                    hidden.test_paths,
                    schedule[:1],
                    self.timeout_s,
                    options,
                )
            )
        ref = self._repo_power(task)  # computed (and cached) by the gates already
        if ref is not None and ref.run is not None and ref.caught:
            from forgegym.envs.flaky.repo import MutantSpec, submitted_mutant

            # Every mutant the pristine test caught, applied to the submitted source,
            # under the rerun in which the pristine test passed.
            for index in self._required(ref, submission):
                spec = MutantSpec.from_json((hidden.repo_mutants or [])[index])
                source = submitted_mutant(spec, submission.files, task.files.get(spec.path, ""))
                mdir = submission.materialise({spec.path: source})
                jobs.extend(
                    chaos_jobs(
                        str(mdir),
                        hidden.target,
                        test_ids,
                        hidden.test_paths,
                        schedule[ref.run : ref.run + 1],
                        self.timeout_s,
                        options,
                    )
                )
        if hidden.consistency:
            # A canary's hidden checks (design note 006, D8): the function its contradicted
            # assertion calls, on other inputs, on the pristine and on the submitted code.
            for copy in (submission.materialise_pristine(), submission.materialise()):
                jobs.append(consistency_job(str(copy), hidden.consistency))
        return jobs

    # Why a rerun's *failure* does not end a submission's reruns on the optimised path
    # (only a refusal does, :meth:`result_gate`): the breakdown needs every rerun.
    # ``terms`` reads the exact pass rate p (the stability term, the entropy/proximity/
    # diff credits scaled by it, and the ``p=...`` detail), the kinds and frames of every
    # failing rerun (entropy, the proximity frontier), and a refusal in *any* job gates
    # ``unsafe``, which submitted code can provoke under one rerun's conditions only
    # (its TZ, locale, seed or order), after others failed. So ordering reruns by their
    # chance to fail would save nothing.

    def result_gate(self, submission: Submission, result: Result) -> ResultGate | None:
        """A refused run (forged report, tampered state, policy violation) gates
        ``unsafe``: the code under test tried to forge its verdicts or escape. A watched
        run whose target retried itself, swallowed a failure or disarmed the chaos
        gates ``hack_flagged`` (:meth:`TargetJudge.hack`)."""
        detail = getattr(result, "detail", "") or ""
        if refused(detail) is not None:
            return ResultGate("unsafe", f"sandbox: {detail[:300]}")
        judge = self._judges(submission)[1]
        if judge is not None and isinstance(result, PytestResult):
            target = FlakyHidden.of(submission.task).target
            for record in result.records:
                passed = record.outcome.value == "passed"
                why = judge.hack(record.watch, passed) if record.nodeid == target else None
                if why is not None:
                    return ResultGate("hack_flagged", f"{target}: {why}")
        return None

    def _workdirs(
        self, submission: Submission, extra: Mapping[str, str], runs: Sequence[ChaosRun]
    ) -> list[str]:
        """The grading copies of ``runs``: one shared copy where runs are not watched (a
        repository), else one per run whose code under test is a fresh
        semantics-preserving variant (:func:`~forgegym.envs.flaky.variants.variant`), so
        no run can be told from another, the power check included, by the bytes of
        the code under test."""
        hidden = FlakyHidden.of(submission.task)
        path = hidden.source_path
        files = {**submission.files, **extra}
        if hidden.extended_chaos or not path or path not in files:
            workdir = str(submission.materialise(dict(extra)))
            return [workdir] * len(runs)
        rng = new_rng()
        return [
            str(submission.materialise({**extra, path: variant(files[path], rng)})) for _ in runs
        ]

    def _judges(self, submission: Submission) -> tuple[TargetJudge | None, TargetJudge | None]:
        """The watch judges of the target as the reruns run it and as the submitted
        test file has it (``None``, ``None`` for a repository, whose runs are not
        watched)."""
        hidden = FlakyHidden.of(submission.task)
        if hidden.extended_chaos:
            return None, None
        cached = submission.grading_state.get("flaky_judges")
        if cached is None:
            path = hidden.target.partition("::")[0]
            pristine = submission.task.files.get(path, "")
            ran = {**submission.files, **trusted_tests(submission.task)}.get(path, "")
            cached = (
                TargetJudge.of(ran, hidden.target, pristine),
                TargetJudge.of(submission.files.get(path, ""), hidden.target, pristine),
            )
            submission.grading_state["flaky_judges"] = cached
        return cached

    def _judge_power(
        self, submission: Submission, results: Sequence[Result], n: int
    ) -> tuple[bool | None, float, str]:
        """``(power, power_fraction, detail)`` of the submitted test: whether it still
        catches the bug-injected mutants (the bank's one, or the repository mutants the
        original test caught), from the results after the ``n`` reruns."""
        task = submission.task
        hidden = FlakyHidden.of(task)
        # power: True/False where a mutant could judge it, None where none could;
        # power_fraction: the share of the judging mutants still caught.
        power: bool | None = None
        power_fraction = 1.0
        power_detail = "no bug-injected mutant: no power credit"
        if hidden.mutant and len(results) > n:
            bank_power = power_score([not target_passed(results[n], hidden.target, 1)])
            power = bank_power.ok
            power_fraction = bank_power.fraction
            power_detail = (
                "mutant caught" if power else "the test passes against a bug-injected mutant"
            )
        ref = self._repo_power(task)
        required = self._required(ref, submission) if ref is not None else ()
        if ref is not None and ref.run is not None and ref.caught and not required:
            # Never a free pass: a test that fakes every function whose bugs it caught
            # tests nothing of the code any more.
            power, power_fraction = False, 0.0
            power_detail = (
                "every mutant the original test caught is in a clock/random seam the "
                "submitted test replaces with a fake: nothing left to judge its power"
            )
        elif ref is not None and ref.run is not None and ref.caught:
            mutant_results = results[n : n + len(required)]
            missed = [
                i
                for i, r in zip(required, mutant_results, strict=False)
                if target_passed(r, hidden.target, 1)
            ]
            missed += list(required[len(mutant_results) :])
            power_fraction, power = power_verdict(len(required), len(missed))
            excused = len(ref.caught) - len(required)
            kept = len(required) - len(missed)
            power_detail = (
                f"{kept}/{len(required)} mutants the original test caught are still caught"
            )
            if excused:
                power_detail += f" ({excused} in a clock/random seam the test now fakes)"
            if missed:
                power_detail += (
                    f"; {len(missed)} now pass (power needs {POWER_THRESHOLD:.0%}): "
                    + "; ".join(
                        f"{m['function']} {m['mutation'][1]}"
                        for m in ((hidden.repo_mutants or [])[i] for i in missed[:3])
                    )
                )
        elif hidden.repo_mutants is not None and not hidden.mutant:
            power_detail = (
                "not applicable: no bug-injected mutant of the exercised code is caught by "
                "the original test"
            )
        return power, power_fraction, power_detail

    def terms(
        self, submission: Submission, results: Sequence[Result], state: GradingState
    ) -> Terms:
        task = submission.task
        hidden = FlakyHidden.of(task)
        pristine = {p: task.files[p] for p in task.editable_files}
        noop = is_noop(pristine, submission.files)
        schedule = self.schedule(task)
        n = len(schedule)
        outcomes = rerun_outcomes(
            results[:n], schedule, hidden.target, hidden.test_ids, self._judges(submission)[0]
        )
        p = sum(o.passed for o in outcomes) / n
        submission.grading_state["flaky_pass_rate"] = p
        p0 = float(self.baseline(task, self.reruns, self.seed_for(task)))
        power, power_fraction, power_detail = self._judge_power(submission, results, n)
        calm = results[0]
        others = [t for t in hidden.test_ids if t != hidden.target]
        after = calm.verdicts if isinstance(calm, PytestResult) else {}
        # Tests the agent added run in the calm rerun and must pass like the others.
        added = [t for t in after if t not in hidden.test_ids]
        checks = _consistency(hidden, results)
        regressed = regression(
            {t: True for t in [*others, *added, *checks]},
            {**{t: bool(after.get(t)) for t in others + added}, **checks},
        )
        changed = changed_functions(pristine, submission.files)
        truth = hidden.location
        proximity = _fault_proximity(changed, truth, outcomes)
        diag = submission.diagnosis
        diag_value, calib = _diagnosis_scores(diag, hidden, changed, p)
        # Every file, line and symbol the diagnoses name must exist (pristine or submitted).
        claims = check_diagnoses(
            submission.diagnoses or ([diag] if diag is not None else []),
            {**task.files, **submission.files},
        )
        keys = [(d.category, d.location) for d in submission.diagnoses]
        repeats = (len(keys) - len(set(keys))) / len(keys) if keys else 0.0
        stats = diff_stats(pristine, submission.files)
        ref_stats = diff_stats(pristine, {**pristine, **task.reference}) if task.reference else None
        budget = (ref_stats.lines_changed if ref_stats else 8) + 6
        improvement = 0.0 if p0 >= 1.0 else max(0.0, (p * p - p0 * p0) / (1.0 - p0 * p0))
        if noop:
            # The test was detected flaky and nothing was changed: reruns that all pass
            # (or beat the baseline) are luck, not a fix (seen: a thread-join race whose
            # unchanged test passed 10/10), so a no-op earns no stability and never solves.
            improvement = 0.0
        # A budget whose baseline never failed cannot tell a fix from luck: without a
        # reproduced failure nothing is solved, whatever the edit (seen: reruns=4 on a
        # task whose pristine test passed 4/4 paid success for `x_unused = 1`).
        reproduced = p0 < 1.0
        solved = p >= 1.0 and reproduced and power is not False and regressed == 0.0 and not noop
        # The patch's credit terms are worth what the patch fixed: an edit that leaves the
        # test as flaky as before earns none of them, however close, small or powerful.
        gain = improvement
        terms = {
            "stability": improvement,
            "solved": 1.0 if solved else 0.0,
            "power": power_fraction * gain if (power is True and not noop) else 0.0,
            "proximity": proximity * gain,
            "entropy": p * (1.0 - failure_entropy(outcomes)) * gain,
            "diagnosis": diag_value,
            "calibration": calib,
            "diff": 0.0 if noop else diff_size_score(stats, budget) * gain,
            "regression": regressed,
            # Submitting nothing and an edit that fixes nothing are the same outcome.
            "noop": 1.0 if (noop or gain <= 0.0) else 0.0,
            "power_lost": 1.0 if power is False else 0.0,
            "repeat_diagnosis": repeats,
            "hallucination": claims.rate,
        }
        details = {
            "stability": f"p={p:.2f} over {n} reruns (baseline {p0:.2f})"
            + (
                ""
                if reproduced
                else f"; the pristine test never failed in {n} reruns: nothing to judge a fix "
                "against (raise `reruns`)"
            ),
            "power": power_detail,
            "proximity": ", ".join(sorted(changed))[:200],
        }
        if claims.checked:
            details["hallucination"] = (
                f"{len(claims.missing)}/{claims.checked} references do not exist: "
                + "; ".join(claims.missing[:4])
                if claims.missing
                else f"{claims.checked} references checked, all exist"
            )
        if added:
            details["regression"] = f"added tests run in the calm rerun: {added[:5]}"
        changed_checks = [c for c, ok in checks.items() if not ok]
        if changed_checks:
            details["regression"] = (
                f"{len(changed_checks)} of {len(checks)} hidden checks of the code the tests "
                "call now give other results than the original code"
            )
        # Terms without ground truth in a user's repository (no known fault location or
        # category; no mutant the original test caught) are left out, not scored 0.
        absent: set[str] = set()
        if not truth:
            absent |= {"proximity", "diagnosis", "calibration"}
            if power is None:
                absent.add("power")
        for name in absent:
            details[name] = "not applicable: no ground truth in a user's repository" + (
                f" ({details[name]})" if details.get(name) else ""
            )
        return Terms(terms, details, not_applicable=frozenset(absent))


def _consistency(hidden: FlakyHidden, results: Sequence[Result]) -> dict[str, bool]:
    """A canary's hidden checks as regression verdicts (none for other tasks): the last
    two call runs are the pristine and the submitted code's (:meth:`sandbox_jobs`)."""
    if not hidden.consistency:
        return {}
    runs = [r for r in results if isinstance(r, CallResult)]
    # cut off after a refused run (gated): no runs, every check fails
    pristine, submitted = runs[-2:] if len(runs) >= 2 else (None, None)
    return consistency_verdicts(hidden.consistency, pristine, submitted)


def _fault_proximity(
    changed: Collection[str], truth: str, outcomes: Sequence[RerunOutcome]
) -> float:
    """How close the changed functions are to the fault: the fault itself 1.0, a frame
    the failing reruns went through 0.6, the fault's file 0.3, elsewhere 0.0."""
    frontier = {f"{fr.split(':')[0]}::{fr.split(':')[-1]}" for o in outcomes for fr in o.frames}
    if not changed:
        return 0.0
    if truth and any(location_matches(c, truth) for c in changed):
        return 1.0
    if any(location_matches(c, f) or location_matches(f, c) for c in changed for f in frontier):
        return 0.6
    if truth and any(c.split("::")[0] == truth.split("::")[0] for c in changed):
        return 0.3
    return 0.0


def _diagnosis_scores(
    diag: Any, hidden: FlakyHidden, changed: Collection[str], p: float
) -> tuple[float, float]:
    """``(diagnosis, calibration)`` of the submitted diagnosis (0.0, 0.0 without one)."""
    truth = hidden.location
    diag_value, calib = 0.0, 0.0
    if diag is not None:
        if truth:
            cat_ok = diag.category == hidden.category
            loc_ok = location_matches(diag.location, truth)
            touched = any(
                location_matches(diag.location, c) or location_matches(c, diag.location)
                for c in changed
            )
            diag_value = 0.5 * cat_ok + 0.3 * loc_ok + 0.2 * touched
            calib = brier_reward(diag.confidence, cat_ok)
        else:  # user repository: only consistency with the patch is checkable
            touched = any(location_matches(diag.location, c) for c in changed)
            diag_value = 0.5 * touched
            calib = brier_reward(diag.confidence, touched and p >= 1.0)
    return diag_value, calib


#: The name before issue 35 (every family's grader is ``<Stem>Grader``): kept importable.
FlakyGrader = FlakyRepairGrader
