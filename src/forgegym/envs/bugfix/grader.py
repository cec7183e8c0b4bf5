"""Grading of bug-fix submissions: gates, hidden differential checks, visible tests,
lint, diff size, efficiency and grounded notes.

Order of decisions:

1. **gates** (parent, static): an editable file that does not compile -> ``compile_error``;
   any anti-hack finding -> ``hack_flagged`` (exit calls, framework monkeypatching,
   skip markers, always-equal classes from :mod:`forgegym.rewards.antihack`, plus this
   family's :func:`scan_hardcoded_expectations`). A gated submission runs nothing.
2. **hidden differential checks** dominate: the child only calls the candidate's
   functions and returns JSON-plain values; the parent compares them with the reference
   outputs, which never enter the child. ``hidden`` is the fail-to-pass rate over the
   checks the bug broke, *not counting the inputs the agent was shown* (the reported
   symptom call and every call the visible tests make): special-casing what the agent saw
   cannot lift it, whatever disguise hides the lookup from the static scan. (When the
   bug broke nothing but shown inputs, they count, and the static scan is the guard.)
   ``regression`` penalises checks the bug had left intact.
3. **quality** terms (visible tests, lint, diff size, efficiency) are scaled by the
   hidden fail-to-pass rate: a patch that fixes nothing earns no style credit, so the
   no-op and visible-test-only hacks score at the bottom.
4. **notes**: a ``review``/``reflect`` note earns credit only when grounded: it names the
   buggy file and a function the bug actually changed, without listing every function;
   like the quality terms it is scaled by the fail-to-pass rate, so naming the bug
   without fixing it cannot lift a no-op above the no-op.
5. ``noop`` penalises a patch that repairs none of the broken checks (an unchanged
   module included), so no edit that fixes nothing beats submitting nothing.

``success`` = every hidden check passes and no gate fired.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from forgegym.envs.bugfix.hidden import BugfixHidden
from forgegym.envs.bugfix.scan import scan_submission
from forgegym.grading.batch import Submission
from forgegym.grading.code_grader import CodeGrader, GradingState, Terms, check_timeout
from forgegym.rewards import RewardBreakdown, bounded
from forgegym.rewards.antihack import HackFinding
from forgegym.rewards.breakdown import TermKind, scaled_detail
from forgegym.rewards.diff import diff_size_score, diff_stats, is_noop
from forgegym.rewards.lint import LintError, lint_many, lint_score, lint_sources
from forgegym.sandbox.jobs import CallResult, Job, PytestJob, PytestResult
from forgegym.tasklib.literals import scan_hardcoded_expectations
from forgegym.tasklib.values import call_job, hidden_verdicts

__all__ = [
    "DEFAULT_WEIGHTS",
    "BugfixGrader",
    "grounded_note",
    "scan_hardcoded_expectations",
    "scan_submission",
    "shown_calls",
    "solved",
]

#: Default term weights (env kwarg ``weights`` overrides any subset).
DEFAULT_WEIGHTS: dict[str, float] = {
    "hidden": 6.0,
    "visible": 1.0,
    "lint": 0.25,
    "diff": 0.5,
    "efficiency": 0.25,
    "notes": 0.2,
    "regression": 2.0,
    "noop": 1.0,
}
_KINDS: dict[str, TermKind] = {"regression": "penalty", "noop": "penalty"}


# ----------------------------------------------------------------- shown inputs


def _plain_key(value: Any) -> str | None:
    """A canonical key of JSON-like data (tuples as lists); ``None`` if not JSON-like."""
    try:
        return json.dumps(value, sort_keys=True, default=_reject)
    except (TypeError, ValueError):
        return None


def _reject(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def _shown_inputs(functions: Sequence[str], sources: Sequence[str]) -> set[tuple[str, str]]:
    """``(function, args key)`` of every call with literal arguments to one of the
    module's ``functions`` in ``sources`` (the visible tests)."""
    names = set(functions)
    shown: set[tuple[str, str]] = set()
    for source in sources:
        try:
            tree = bounded.ast_parse(source)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and not node.keywords):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name not in names:
                continue
            try:
                args = [ast.literal_eval(a) for a in node.args]
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            key = _plain_key(args)
            if key is not None:
                shown.add((name, key))
    return shown


def shown_calls(task: Any) -> frozenset[int]:
    """Indices of the hidden calls whose inputs the agent was shown: the reported symptom
    call and any hidden call that a visible test also makes (same function, same args)."""
    cached = _SHOWN_CACHE.get(task.task_id)
    if cached is not None:
        return cached
    hidden = BugfixHidden.of(task)
    tests = [task.files[p] for p in task.visible_test_files if p in task.files]
    seen = _shown_inputs(hidden.module_functions, tests)
    out = set()
    if hidden.symptom_call is not None:
        out.add(hidden.symptom_call)
    for i, call in enumerate(hidden.calls):
        if (call.function, _plain_key(list(call.args))) in seen:
            out.add(i)
    result = frozenset(out)
    if len(_SHOWN_CACHE) > 4096:
        _SHOWN_CACHE.clear()
    _SHOWN_CACHE[task.task_id] = result
    return result


_SHOWN_CACHE: dict[str, frozenset[int]] = {}


# ----------------------------------------------------------------- static scans
# The special-casing scan is shared with FlakyRepair's repository mode (tasklib).


def grounded_note(text: str, hidden: BugfixHidden) -> bool:
    """A note is grounded when it names the buggy file (or module) and at least one
    function the bug changed, and does not shotgun-list every function."""
    lowered = text.lower()
    if hidden.module.lower() not in lowered:
        return False
    # The file name must not count as naming a function of the same name.
    lowered = lowered.replace(hidden.mutated_file.lower(), " ")
    named = {
        fn
        for fn in hidden.module_functions
        if re.search(rf"(?<![a-z0-9_]){re.escape(fn.lower())}(?![a-z0-9_])", lowered)
    }
    mutated = set(hidden.mutated_functions)
    return bool(named & mutated) and len(named) <= len(mutated) + 1


def solved(breakdown: RewardBreakdown) -> bool:
    """The family's success predicate: every hidden check passes, nothing regressed and
    no gate fired."""
    terms = breakdown.terms
    return (
        not breakdown.gates
        and "hidden" in terms
        and terms["hidden"].value >= 1.0
        and terms["regression"].value <= 0.0
    )


# ----------------------------------------------------------------------- grader
class BugfixGrader(CodeGrader):
    """Implements :class:`forgegym.grading.batch.Grader` for ``Forge/Bugfix-v0`` (the
    :class:`~forgegym.grading.code_grader.CodeGrader` template: limits, compile and
    :func:`scan_submission` gates; the hidden-call and visible-test jobs; terms).

    Args:
        weights: overrides of :data:`DEFAULT_WEIGHTS` (validated; ``ValueError`` names
            the ``weights`` argument and the bad term).
        timeout_s: wall limit of each grading job.
    """

    name = "bugfix"
    default_weights = DEFAULT_WEIGHTS
    term_kinds = _KINDS
    lints = True

    def __init__(self, weights: Mapping[str, float] | None = None, timeout_s: float = 10.0):
        super().__init__(weights)
        self.timeout_s = check_timeout(timeout_s)

    # ----------------------------------------------------------- the steps
    def scan(self, submission: Submission) -> list[HackFinding]:
        return scan_submission(submission.task, submission.files)

    def lint(self, submission: Submission) -> float:
        task = submission.task
        before = {p: task.files[p] for p in task.editable_files}
        try:
            return lint_score(
                _lint_cached(tuple(before.items())), lint_sources(dict(submission.files))
            )
        except LintError:
            return 1.0  # ruff unavailable: do not punish the policy for the machine

    def prepare(self, submissions: Sequence[Submission]) -> None:
        """Batch grading: lint every submission within the parent's bounds with one ruff
        run in the background (:meth:`start` picks each one's score up; a failed batch
        run falls back to linting each submission alone, as ``jobs`` does without it)."""
        wanted = [
            s
            for s in submissions
            if bounded.files_problem({p: c for p, c in s.files.items() if c != s.task.files.get(p)})
            is None
        ]
        if not wanted:
            return
        futures: list[Future[float]] = [Future() for _ in wanted]
        for sub, future in zip(wanted, futures, strict=True):
            sub.grading_state["bugfix-lint"] = future

        def run() -> None:
            found: list[list[Any] | None] = [None] * len(wanted)
            # On failure each submission is linted alone below.
            with contextlib.suppress(LintError, ValueError, OSError):
                found = list(lint_many([dict(s.files) for s in wanted]))
            for sub, future, after in zip(wanted, futures, found, strict=True):
                try:
                    if after is None:
                        future.set_result(self.lint(sub))
                    else:
                        before = _lint_cached(
                            tuple((p, sub.task.files[p]) for p in sub.task.editable_files)
                        )
                        future.set_result(lint_score(before, after))
                except LintError:
                    future.set_result(1.0)
                except Exception as exc:  # noqa: BLE001 - score() reports it
                    future.set_exception(exc)

        self._pool().submit(run)

    def start(self, submission: Submission, state: GradingState) -> None:
        """The lint :meth:`prepare` started for the batch, else a background lint now."""
        state.lint = submission.grading_state.pop("bugfix-lint", None)
        super().start(submission, state)

    def sandbox_jobs(self, submission: Submission, state: GradingState) -> list[Job]:
        task = submission.task
        hidden = BugfixHidden.of(task)
        workdir = str(submission.materialise())
        return [
            call_job(hidden.module, hidden.calls, workdir, self.timeout_s),
            PytestJob(
                workdir=workdir,
                targets=list(task.visible_test_files),
                expected_ids=list(task.visible_test_ids),
                timeout_s=self.timeout_s,
            ),
        ]

    def terms(self, submission: Submission, results: Sequence[Any], state: GradingState) -> Terms:
        task = submission.task
        hidden = BugfixHidden.of(task)
        calls_result, tests_result = results
        assert isinstance(calls_result, CallResult) and isinstance(tests_result, PytestResult)
        verdicts = hidden_verdicts(hidden.calls, calls_result)
        broken = set(hidden.failing_hidden)
        intact = [i for i in range(len(verdicts)) if i not in broken]
        # Inputs the agent saw never count toward fail-to-pass (see the module doc).
        broken = (broken - shown_calls(task)) or broken
        f2p = sum(verdicts[i] for i in broken) / len(broken)
        regression = sum(not verdicts[i] for i in intact) / len(intact) if intact else 0.0
        pristine = {p: task.files[p] for p in task.editable_files}
        stats = diff_stats(pristine, submission.files)
        budget = max(2, 2 * hidden.fix_lines)
        efficiency = 1.0 - (submission.steps_used - 1) / max(1, submission.max_steps)
        efficiency = min(1.0, max(0.0, efficiency))
        lint = self.lint_result(submission, state)
        grounded = any(
            grounded_note(n.text, hidden)
            for n in submission.notes
            if n.kind in ("review", "reflect")
        )
        terms = {
            "hidden": f2p,
            "visible": tests_result.pass_rate * f2p,
            "lint": lint * f2p,
            "diff": diff_size_score(stats, budget) * f2p,
            "efficiency": efficiency * f2p,
            "notes": f2p if grounded else 0.0,
            "regression": regression,
            # A patch that repairs none of the broken checks is a no-op for the bug,
            # whatever its text: it never beats submitting nothing.
            "noop": 1.0 if f2p == 0.0 else 0.0,
        }
        fixed = sum(verdicts[i] for i in broken)
        # Every credit but ``hidden`` is scaled by the fixed share of the bug (f2p), so a
        # polished non-fix earns nothing; the detail says so next to the raw count.
        why = f"{fixed}/{len(broken)} broken checks fixed"
        passed = sum(tests_result.verdicts.values())
        details = {
            "hidden": f"{sum(verdicts)}/{len(verdicts)} checks pass; "
            f"{fixed}/{len(broken)} unshown broken checks fixed",
            "visible": scaled_detail(f"{passed}/{len(tests_result.verdicts)} passed", f2p, why),
            "lint": scaled_detail("", f2p, why),
            "efficiency": scaled_detail("", f2p, why),
            "diff": scaled_detail(f"{stats.lines_changed} lines", f2p, why),
            "noop": "unchanged module"
            if f2p == 0.0 and is_noop(pristine, submission.files)
            else "",
        }
        notes = list(state.notes)
        if calls_result.status.value != "completed":
            notes.append(f"hidden checks run: {calls_result.status.value}")
        return Terms(terms, details, notes)

    @staticmethod
    def solved(breakdown: RewardBreakdown) -> bool:
        """Every hidden check passes and no gate fired (see :func:`solved`)."""
        return solved(breakdown)


@functools.lru_cache(maxsize=512)
def _lint_cached(files: tuple[tuple[str, str], ...]) -> list[Any]:
    """Lint findings of a task's starting files (the same for every completion)."""
    return lint_sources(dict(files))
