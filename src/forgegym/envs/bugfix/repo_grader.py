"""How a repository-mode Bugfix task is graded (:class:`RepoGrader`; the task is built by
:mod:`forgegym.envs.bugfix.repo`, whose module doc says what each term pays), and the
static anti-hack findings it gates a patch on (:func:`repo_patch_findings`)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from forgegym.core.task import Task
from forgegym.envs.bugfix.behaviour import (
    BehaviourChecks,
    BehaviourVerdict,
    call_job,
)
from forgegym.envs.bugfix.behaviour import compare as compare_behaviour
from forgegym.envs.bugfix.repo_hidden import DEFAULT_REPO_WEIGHTS, RepoHidden
from forgegym.grading.batch import Submission
from forgegym.grading.code_grader import (
    CodeGrader,
    GradingState,
    Terms,
    limit_and_compile_gates,
)
from forgegym.rewards import bounded
from forgegym.rewards.antihack import HackFinding, scan_patch
from forgegym.rewards.antihack.special_casing import scan_special_casing
from forgegym.rewards.breakdown import scaled_detail
from forgegym.rewards.diff import diff_size_score, diff_stats, is_noop
from forgegym.rewards.lint import LintError, LintFinding, lint_score, lint_sources
from forgegym.sandbox.jobs import (
    CallResult,
    Job,
    ProjectRun,
    PytestJob,
    PytestResult,
    RunStatus,
    pristine_manifest,
)
from forgegym.tasklib.baseline import (
    REPO_HASH_SEED,
)
from forgegym.tasklib.project import graded_test_files

if TYPE_CHECKING:
    pass

__all__ = ["RepoGrader", "repo_patch_findings"]

_KINDS: dict[str, Any] = {"regression": "penalty", "noop": "penalty"}


_PRISTINE_CACHE: dict[str, dict[str, str]] = {}


def _pristine(task: Task, hidden: RepoHidden) -> dict[str, str]:
    """The pristine manifest of a repository task (its files as the episode started and
    its hidden tests), computed once per task."""
    key = f"{task.task_id}\0{len(task.files)}"
    cached = _PRISTINE_CACHE.get(key)
    if cached is None:
        if len(_PRISTINE_CACHE) > 256:
            _PRISTINE_CACHE.clear()
        cached = pristine_manifest({**task.files, **hidden.hidden_files}, task.data_files)
        _PRISTINE_CACHE[key] = cached
    return cached


#: Ruff findings of a task's pristine editable files, by their content: every completion
#: of a task compares with the same starting state (a real project's package is linted
#: once per process, not once per completion).
_PRISTINE_LINT: dict[str, list[LintFinding]] = {}
_PRISTINE_LINT_LOCK = threading.Lock()
_PRISTINE_LINT_MAX = 256


_COMPILED: dict[tuple[str, str], str | None] = {}
_COMPILED_MAX = 8192


def _compile_error(path: str, source: str) -> str | None:
    """Why ``source`` does not compile as ``path`` (``None``: it does), memoised by
    content while the parse caches are on (:func:`forgegym.rewards.bounded.uncached`)."""
    if not bounded.cache_enabled():
        return _compile(path, source)
    key = (path, hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest())
    with _PRISTINE_LINT_LOCK:
        if key in _COMPILED:
            return _COMPILED[key]
    error = _compile(path, source)
    with _PRISTINE_LINT_LOCK:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[key] = error
    return error


def _compile(path: str, source: str) -> str | None:
    try:
        compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"{exc}"
    return None


def _pristine_lint(files: Mapping[str, str]) -> list[LintFinding]:
    """:func:`~forgegym.rewards.lint.lint_sources` of ``files``, memoised by content
    while the parse caches are on (:func:`forgegym.rewards.bounded.uncached`)."""
    if not bounded.cache_enabled():
        return lint_sources(files)
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    key = digest.hexdigest()
    with _PRISTINE_LINT_LOCK:
        found = _PRISTINE_LINT.get(key)
    if found is None:
        found = lint_sources(files)  # LintError: not memoised
        with _PRISTINE_LINT_LOCK:
            if len(_PRISTINE_LINT) >= _PRISTINE_LINT_MAX:
                _PRISTINE_LINT.pop(next(iter(_PRISTINE_LINT)))
            _PRISTINE_LINT[key] = found
    return list(found)


def repo_patch_findings(
    pristine: Mapping[str, str],
    files: Mapping[str, str],
    tests: Mapping[str, str],
    reference: Mapping[str, str] | None = None,
) -> list[HackFinding]:
    """Every static anti-hack finding repository mode gates a patch on (``hack_flagged``):
    the shared scans of the whole patch (:func:`scan_patch`), then, for each changed
    file of ``pristine`` (the editable files as the episode started) in ``files``'
    order, the verbatim test-constant scan and the special-casing scan against the
    visible ``tests`` (``{path: text}``, in order). ``reference``: a real-bank task's
    trusted fix, whose constants are exempt (absent in repository mode proper).
    ``benchmarks/upstream_fixes.py`` runs this on real upstream fixes (precision)."""
    from forgegym.envs.bugfix.grader import scan_hardcoded_expectations

    trusted = reference or {}
    findings: list[HackFinding] = scan_patch(pristine, dict(files), list(tests))
    sources = list(tests.values())
    for path, text in files.items():
        if path not in pristine or text == pristine[path]:
            continue
        # a real-bank task's trusted reference restores the constant a mutation
        # changed (num2words' ``100``), which its tests also hold: that is the fix;
        # without one, the pristine file's own constants are exempt (as the
        # special-casing scan and FlakyRepair's repository mode have it: tenacity's
        # upstream fix adds a second ``return "th"``)
        findings += scan_hardcoded_expectations(
            pristine[path],
            text,
            path,
            sources,
            reference=trusted.get(path),
            known_constants=trusted.get(path) is None,
        )
        # the same in any form: derived or computed values, assignments,
        # membership, defaults, except handlers, files of the tests
        findings += scan_special_casing(
            pristine[path],
            text,
            path,
            sources,
            reference=trusted.get(path),
            test_paths=list(tests),
        )
    return findings


class RepoGrader(CodeGrader):
    """Grades repository tasks (see the module doc): the
    :class:`~forgegym.grading.code_grader.CodeGrader` template with

    * static gates: the parent's limits, every editable file compiled (memoised by
      content), the shared patch scans and the special-casing scans of what the tests
      hold (:meth:`static_gates`);
    * sandbox jobs: the selected visible test files, the hidden test files, and the
      behaviour checks' calls when the task has active ones (:meth:`sandbox_jobs`);
    * terms: fail-to-pass, pass-to-pass, the behaviour share and the quality terms
      (:meth:`terms`); ``behaviour`` is a not-applicable term (weight 0, left out and
      the rest renormalised) for a task graded by its tests alone;
    * lint in the background, and run sharing (``shares_runs``): the gates and jobs
      read the task, the files and the deletions only, so completions of one patch with
      other notes or step counts share one run of the project's tests.

    Args:
        weights: overrides of :data:`DEFAULT_REPO_WEIGHTS`.
        timeout_s: wall limit of each test run (at least the task's measured limit).
        full_suite: run every test file at grading; default: the files of the
            fail-to-pass tests and those importing a module the agent changed.
    """

    name = "bugfix-repo"
    default_weights = DEFAULT_REPO_WEIGHTS
    term_kinds = _KINDS
    lints = True
    shares_runs = True

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        timeout_s: float = 20.0,
        full_suite: bool = False,
    ):
        super().__init__(weights)
        # Not check_timeout's (0, 600]: a measured suite limit may reach the cap (3600 s).
        self.timeout_s = float(timeout_s)
        if not isinstance(full_suite, bool):
            raise ValueError(f"full_suite: expected a bool, got {full_suite!r}")
        self.full_suite = full_suite

    def selected_files(self, submission: Submission, hidden: RepoHidden) -> list[str]:
        """The visible test files graded: every one with ``full_suite``, else those of
        the fail-to-pass tests and those that import a module the agent changed."""
        task = submission.task
        if self.full_suite:
            return list(task.visible_test_files)
        changed = [p for p in task.editable_files if submission.files.get(p) != task.files.get(p)]
        return graded_test_files(
            task.visible_test_files, hidden.failing_tests, changed, hidden.test_imports
        )

    def _job(
        self, submission: Submission, targets: list[str], ids: list[str], extra: Any = None
    ) -> PytestJob:
        task = submission.task
        hidden = RepoHidden.model_validate(task.hidden)
        project = task.metadata.get("project_run")
        skip = set(task.metadata.get("skip_ids") or ())
        return PytestJob(
            workdir=str(submission.materialise(extra) if extra else submission.materialise()),
            targets=targets,
            expected_ids=ids,
            timeout_s=max(self.timeout_s, hidden.time_limit_s),
            project=None if project is None else ProjectRun.model_validate(project),
            conftest=project is not None,
            order=[i for i in ids if i not in skip] if skip else None,
            python_hash_seed=REPO_HASH_SEED if project is not None else None,
            # Provenance (docs/design/004): the files as the episode started are trusted
            # code; what the agent changed is not, and tests must be these tests.
            pristine=_pristine(task, hidden),
        )

    def scan(self, submission: Submission) -> list[HackFinding]:
        """The shared patch scans (exit calls, pytest and builtins monkeypatching, skip
        markers, always-equal objects, ...) and special-casing of the literals the
        tests hold, verbatim or in any derived form (:func:`repo_patch_findings`)."""
        task = submission.task
        return repo_patch_findings(
            {p: task.files[p] for p in task.editable_files},
            submission.files,
            {p: task.files[p] for p in task.visible_test_files},
            task.reference,
        )

    def static_gates(self, submission: Submission) -> tuple[list[str], list[str]]:
        """The template's default gates (the parent's limits, then every editable file
        compiled in order, then :meth:`scan`), each file's compile outcome memoised by
        content: most of a real project is unchanged from one completion to the next."""
        gates, notes, final = limit_and_compile_gates(submission, ())
        if final:
            return gates, notes
        for path in submission.task.editable_files:
            error = _compile_error(path, submission.files.get(path, ""))
            if error is not None:
                gates, notes = ["compile_error"], [f"{path} does not compile: {error}"]
                break
        return self.gate_findings(gates, notes, self.scan(submission))

    def lint(self, submission: Submission) -> float:
        """Ruff's credit of the editable files against the task's starting ones (1.0
        when ruff is unavailable: the machine's fault, not the policy's)."""
        task = submission.task
        pristine = {p: task.files[p] for p in task.editable_files}
        try:
            return lint_score(_pristine_lint(pristine), lint_sources(dict(submission.files)))
        except LintError:
            return 1.0

    def sandbox_jobs(self, submission: Submission, state: GradingState) -> list[Job]:
        """The visible test files graded (:meth:`selected_files`), the hidden test
        files, and the behaviour checks' calls (inputs only: the pristine outcomes stay
        in the parent, :meth:`terms` compares)."""
        task = submission.task
        hidden = RepoHidden.model_validate(task.hidden)
        selected = self.selected_files(submission, hidden)
        ids = [t for t in task.visible_test_ids if t.partition("::")[0] in set(selected)]
        jobs: list[Job] = [self._job(submission, selected, ids)]
        if hidden.hidden_files:
            jobs.append(
                self._job(
                    submission,
                    sorted(hidden.hidden_files),
                    list(hidden.hidden_ids),
                    dict(hidden.hidden_files),
                )
            )
        checks = _active_checks(hidden)
        if checks is not None:
            # inputs only: the pristine outcomes stay in this process (score compares)
            project = task.metadata.get("project_run")
            jobs.append(
                call_job(
                    str(submission.materialise()),
                    checks,
                    None if project is None else ProjectRun.model_validate(project),
                    # trusted as the pytest job trusts them: the files as the episode
                    # started (what the agent changed is not, by its content)
                    pristine=_pristine(task, hidden),
                )
            )
        return jobs

    def terms(self, submission: Submission, results: Sequence[Any], state: GradingState) -> Terms:
        """Fail-to-pass, pass-to-pass, behaviour and the quality terms (module doc)."""
        task = submission.task
        hidden = RepoHidden.model_validate(task.hidden)
        visible = results[0]
        assert isinstance(visible, PytestResult)
        verdicts = dict(visible.verdicts)
        if hidden.hidden_files:
            assert isinstance(results[1], PytestResult)
            verdicts.update(results[1].verdicts)
        f2p_ids = [*hidden.failing_tests, *hidden.hidden_failing]
        ran = set(visible.expected_ids or visible.collected_ids)
        excluded = set(hidden.excluded)
        p2p_ids = [
            *(t for t in hidden.passing_tests if t in ran and t not in excluded),
            *(t for t in hidden.hidden_ids if t not in hidden.hidden_failing),
        ]
        fixed = sum(verdicts.get(t, False) for t in f2p_ids)
        f2p = fixed / len(f2p_ids)
        broken = sum(not verdicts.get(t, False) for t in p2p_ids)
        regression = broken / len(p2p_ids) if p2p_ids else 0.0
        checks = _active_checks(hidden)
        verdict: BehaviourVerdict | None = None
        if checks is not None:
            call_result = results[-1]
            assert isinstance(call_result, CallResult)
            verdict = compare_behaviour(checks, call_result)
            behaviour = min(verdict.share, verdict.derived_share)
            # Test verdicts come from the process that runs the candidate: the credit
            # they pay never exceeds what the behaviour checks (compared here, in the
            # parent) confirm, so a forged "all passed" earns what the no-op earns.
            f2p = min(f2p, behaviour)
            # and the behaviour credit never exceeds what the tests confirm either (a
            # special case right on 2 of 94 calls, with no test passing, was paid 0.017)
            behaviour = f2p
            if verdict.regression > 0.0:
                # Partial credit is for progress that harms nothing: a change that breaks
                # what the bug left right (a special case of one argument answering other
                # calls wrongly) earns none of it, and pays the regression.
                f2p = behaviour = 0.0
            regression = max(regression, verdict.regression)
        else:
            behaviour = 0.0  # not applicable (below): left out, the rest renormalised
        pristine = {p: task.files[p] for p in task.editable_files}
        stats = diff_stats(pristine, submission.files)
        efficiency = 1.0 - (submission.steps_used - 1) / max(1, submission.max_steps)
        efficiency = min(1.0, max(0.0, efficiency))
        lint = self.lint_result(submission, state)
        # ``visible.verdicts`` is computed on each access: once here (a real project's
        # run holds hundreds of tests).
        seen = visible.verdicts
        counted = [t for t in seen if t not in excluded]
        passed_visible = sum(seen[t] for t in counted)
        visible_rate = passed_visible / len(counted) if counted else 0.0
        terms = {
            "hidden": f2p,
            "visible": visible_rate * f2p,
            "lint": lint * f2p,
            "diff": diff_size_score(stats, hidden.diff_budget) * f2p,
            "efficiency": efficiency * f2p,
            "notes": 0.0,
            "regression": regression,
            "noop": 1.0 if f2p == 0.0 else 0.0,
            "behaviour": behaviour,
        }
        # Every credit but ``hidden`` is scaled by the fixed share (f2p): say so.
        why = f"{fixed}/{len(f2p_ids)} fail-to-pass tests passing"
        details = {
            "hidden": f"{fixed}/{len(f2p_ids)} fail-to-pass tests pass"
            + (f" ({len(hidden.hidden_failing)} hidden)" if hidden.hidden_failing else ""),
            "visible": scaled_detail(
                f"{passed_visible}/{len(counted)} passed"
                + ("" if self.full_suite else " in the test files of the changed modules"),
                f2p,
                why,
            ),
            "lint": scaled_detail("", f2p, why),
            "efficiency": scaled_detail("", f2p, why),
            "regression": f"{broken}/{len(p2p_ids)} pass-to-pass tests broken",
            "diff": scaled_detail(f"{stats.lines_changed} lines", f2p, why),
            "noop": "unchanged code" if f2p == 0.0 and is_noop(pristine, submission.files) else "",
            "behaviour": _behaviour_detail(hidden, verdict),
        }
        if verdict is not None:
            details["hidden"] += (
                f"; credit capped by the behaviour checks at {f2p:.3f}"
                if f2p < fixed / len(f2p_ids)
                else ""
            )
            details["regression"] += (
                f"; {verdict.regression:.3f} of the behaviour calls the bug leaves alone broken"
            )
        notes = [*state.notes, "graded by: " + ("tests and behaviour" if verdict else "tests only")]
        if visible.status is not RunStatus.COMPLETED:
            notes = [*notes, f"visible tests run: {visible.status.value}"]
        return Terms(
            terms,
            details,
            notes,
            not_applicable=frozenset() if verdict is not None else frozenset({"behaviour"}),
        )


def _active_checks(hidden: RepoHidden) -> BehaviourChecks | None:
    """The task's behaviour checks when they grade (some call shows the bug), else None."""
    if hidden.behaviour is None:
        return None
    checks = BehaviourChecks.model_validate(hidden.behaviour)
    return checks if checks.active else None


def _behaviour_detail(hidden: RepoHidden, verdict: BehaviourVerdict | None) -> str:
    """Which checks graded the task, and how the behaviour checks went."""
    if verdict is None:
        why = "no behaviour checks (a repository task)"
        if hidden.behaviour is not None:
            checks = BehaviourChecks.model_validate(hidden.behaviour)
            why = f"behaviour checks {checks.status.replace('_', ' ')}: {checks.note}"
        return f"graded by tests only; {why}"[:400]
    text = (
        f"graded by tests and behaviour: {verdict.discriminating_matched}/"
        f"{verdict.discriminating} calls showing the bug right"
        + (f" ({verdict.derived_matched}/{verdict.derived} derived)" if verdict.derived else "")
        + f", {verdict.matched}/{verdict.total} in all"
    )
    if verdict.mismatches:
        text += "; " + "; ".join(verdict.mismatches)
    return text[:400]
