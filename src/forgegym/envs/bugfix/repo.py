"""Bug-fix tasks from your own code: a repository, its failing tests, optional hidden tests.

::

    env = gym.make("Forge/Bugfix-v0", repo_path="path/to/repo",
                   failing_tests=["tests/test_parse.py::test_empty_input"],
                   hidden_tests=["tests/hidden/test_more.py"])        # optional

or, for several tasks, build them with :func:`repo_task` and serve them from a
:class:`~forgegym.core.task.TaskList` (``gym.make("Forge/Bugfix-v0", task_bank=...)``).

What the agent gets: every ``.py`` file of the repository (``.git``, virtual
environments and caches skipped), the source files editable (or those matching
``editable_files``), the test files (``test_*.py``, ``*_test.py``, ``conftest.py``) and
every file under a ``tests``/``test``/``testing`` folder read-only (test helpers
included, so a fix cannot weaken what the tests check), and the failing tests' output
as the bug report. The ``hidden_tests`` files are never shown nor written into its
workspace; they run only at grading.

How it is graded (:class:`RepoGrader`, terms named as the bank's Bugfix tasks so the
family's ``solved`` predicate applies):

* gates: an editable file that does not compile (``compile_error``); the shared anti-hack
  scans (exit calls, pytest/builtins monkeypatching, skip markers, always-equal objects,
  ...) and special-casing of literals the tests contain (``hack_flagged``);
* ``hidden``: the fail-to-pass rate: of ``failing_tests`` and of the hidden tests that
  fail on the unmodified repository, the fraction that now pass;
* ``regression``: of the visible and hidden tests that passed on the unmodified
  repository (pass-to-pass), the fraction that no longer pass;
* ``visible``, ``lint``, ``diff``, ``efficiency``: quality terms scaled by fail-to-pass;
  ``noop``: nothing repaired. ``success``: every fail-to-pass test passes, nothing
  regressed, no gate.

Tests run in the sandbox like every other job: pytest with ``--noconftest`` (a
``conftest.py``'s fixtures are not loaded; tests that need them error), plugin autoload
off, no network, the repository's non-Python files absent. Tests that fail on the
unmodified repository and are not in ``failing_tests`` count nowhere.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from forgegym.core.task import Task
from forgegym.grading.batch import Submission
from forgegym.grading.code_grader import gate_hack_findings, limit_and_compile_gates
from forgegym.rewards import RewardBreakdown, compose, merge_weights
from forgegym.rewards.antihack import HackFinding, scan_patch
from forgegym.rewards.diff import diff_size_score, diff_stats, is_noop
from forgegym.rewards.lint import LintError, lint_score, lint_sources
from forgegym.sandbox.jobs import Job, PytestJob, PytestResult, RunStatus
from forgegym.sandbox.workspace import Workspace, validate_relative_path

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = [
    "DEFAULT_REPO_WEIGHTS",
    "RepoAwareGrader",
    "RepoGrader",
    "RepoHidden",
    "is_repo_task",
    "read_repository",
    "repo_task",
]

FAMILY = "bugfix"
_SKIP_DIRS = frozenset(
    {".git", ".hg", ".venv", "venv", "env", "__pycache__", ".tox", ".nox", "node_modules"}
    | {".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "site-packages"}
)

#: Default weights of a repository task (``weights`` overrides any subset). ``notes`` is 0:
#: without a known bug location, a note cannot be checked for grounding.
DEFAULT_REPO_WEIGHTS: dict[str, float] = {
    "hidden": 6.0,
    "visible": 1.0,
    "lint": 0.25,
    "diff": 0.5,
    "efficiency": 0.25,
    "notes": 0.0,
    "regression": 2.0,
    "noop": 1.0,
}
_KINDS: dict[str, Any] = {"regression": "penalty", "noop": "penalty"}


class RepoHidden(BaseModel):
    """The grading data of a repository task (``Task.hidden``, as a plain dict)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["repo"] = "repo"
    failing_tests: list[str] = Field(description="Visible tests that must go from fail to pass.")
    passing_tests: list[str] = Field(description="Visible tests passing at the start (p2p).")
    hidden_files: dict[str, str] = Field(
        default_factory=dict, description="Your hidden test files: path -> content."
    )
    hidden_ids: list[str] = Field(default_factory=list, description="Every hidden test id.")
    hidden_failing: list[str] = Field(
        default_factory=list, description="Hidden tests failing at the start (fail-to-pass)."
    )
    diff_budget: int = Field(default=20, ge=1, description="Lines a fix may change at full credit.")


def is_repo_task(task: Task) -> bool:
    """Whether ``task`` was built by :func:`repo_task`."""
    return isinstance(task.hidden, Mapping) and task.hidden.get("kind") == "repo"


_TEST_DIRS = frozenset({"tests", "test", "testing"})


def is_test_file(path: str) -> bool:
    """pytest's default test-file names, plus ``conftest.py`` (read-only too)."""
    name = PurePosixPath(path).name
    return name == "conftest.py" or (
        name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    )


def is_test_support(path: str) -> bool:
    """A test file or any file under a ``tests``/``test``/``testing`` folder (helpers
    the tests import): never editable, so a fix cannot weaken what the tests check."""
    return is_test_file(path) or bool(set(PurePosixPath(path).parts[:-1]) & _TEST_DIRS)


def _editable(files: Mapping[str, str], patterns: Sequence[str] | None) -> tuple[str, ...]:
    candidates = [p for p in sorted(files) if not is_test_support(p)]
    if patterns is None:
        chosen = candidates
    else:
        if isinstance(patterns, str) or not isinstance(patterns, Sequence) or not patterns:
            raise ValueError(
                f"editable_files: expected a non-empty list of paths or glob patterns, got {patterns!r}"
            )
        chosen = [
            p
            for p in candidates
            if any(fnmatch.fnmatchcase(p, str(pattern)) for pattern in patterns)
        ]
        unmatched = [
            pattern
            for pattern in patterns
            if not any(fnmatch.fnmatchcase(p, str(pattern)) for p in candidates)
        ]
        if unmatched:
            raise ValueError(
                f"editable_files: {unmatched} match no source file of the repository (test files "
                "and files under tests/ are never editable)"
            )
    if not chosen:
        raise ValueError("repo_path: the repository has no non-test Python file to fix")
    return tuple(chosen)


def read_repository(
    repo_path: str | Path, *, max_file_bytes: int = 64_000, max_files: int = 60
) -> dict[str, str]:
    """Every ``.py`` file under ``repo_path`` (relative POSIX path -> text).

    Raises:
        ValueError: ``repo_path`` is not a directory, has no Python file, has more than
            ``max_files`` of them, or one over ``max_file_bytes``.
    """
    if not isinstance(repo_path, str | Path) or not str(repo_path):
        raise ValueError(f"repo_path: expected a directory path, got {repo_path!r}")
    root = Path(repo_path)
    if not root.is_dir():
        raise ValueError(f"repo_path: {str(repo_path)!r} is not a directory")
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if set(rel.parts[:-1]) & _SKIP_DIRS or not path.is_file():
            continue
        if path.stat().st_size > max_file_bytes:
            raise ValueError(f"repo_path: {rel.as_posix()} is over max_file_bytes={max_file_bytes}")
        files[rel.as_posix()] = path.read_text(encoding="utf-8", errors="replace")
        if len(files) > max_files:
            raise ValueError(f"repo_path: more than max_files={max_files} Python files")
    if not files:
        raise ValueError(f"repo_path: no Python files under {str(repo_path)!r}")
    return files


def _check_ids(failing_tests: Any, files: Mapping[str, str]) -> list[str]:
    if isinstance(failing_tests, str) or not isinstance(failing_tests, Sequence):
        raise ValueError(
            "failing_tests: expected a non-empty list of pytest ids like "
            f"'tests/test_x.py::test_y', got {failing_tests!r}"
        )
    ids = list(dict.fromkeys(failing_tests))
    if not ids:
        raise ValueError("failing_tests: give at least one pytest id that fails")
    for test_id in ids:
        if not isinstance(test_id, str) or "::" not in test_id:
            raise ValueError(
                f"failing_tests: {test_id!r} is not a pytest id like 'tests/test_x.py::test_y'"
            )
        path = test_id.partition("::")[0]
        if path not in files:
            raise ValueError(f"failing_tests: {path!r} is not a Python file of the repository")
        if not is_test_file(path):
            raise ValueError(f"failing_tests: {path!r} is not a test file (test_*.py or *_test.py)")
    return ids


def _run_tests(
    runner: Runner,
    files: Mapping[str, str],
    targets: Sequence[str],
    extra: Mapping[str, str] | None,
    timeout_s: float,
) -> PytestResult:
    workspace = Workspace(files, (), prefix="fg-bugfix-repo-")
    try:
        directory = workspace.materialise({}, dict(extra or {}))
        result = runner.run(
            PytestJob(workdir=str(directory), targets=list(targets), timeout_s=timeout_s)
        )
        assert isinstance(result, PytestResult)
        return result
    finally:
        workspace.close()


def _report(result: PytestResult, ids: Sequence[str]) -> str:
    from forgegym.envs.code_env import render_test_result

    shown = PytestResult(
        status=result.status,
        records=[r for r in result.records if r.nodeid in ids],
        collected_ids=list(ids),
        expected_ids=list(ids),
        detail=result.detail,
        stderr_tail=result.stderr_tail,
    )
    return render_test_result(shown, max_chars=3000)


def repo_task(
    repo_path: str | Path,
    failing_tests: Sequence[str],
    *,
    hidden_tests: Sequence[str] = (),
    editable_files: Sequence[str] | None = None,
    title: str | None = None,
    description: str | None = None,
    runner: Runner | None = None,
    max_file_bytes: int = 64_000,
    max_files: int = 60,
    timeout_s: float = 20.0,
) -> Task:
    """A Bugfix :class:`~forgegym.core.task.Task` from your repository.

    Runs the repository's tests once in the sandbox to check the task: every id in
    ``failing_tests`` must be collected and fail, and the tests that pass become the
    pass-to-pass set.

    Args:
        repo_path: the repository's root (its ``.py`` files are read; nothing is written).
        failing_tests: pytest ids (``path/test_x.py::test_y``, relative to the root) that
            fail now and must pass after the fix.
        hidden_tests: test files (relative to the root) the agent never sees; they run at
            grading (fail-to-pass for those failing now, pass-to-pass for the others).
        editable_files: paths or ``fnmatch`` patterns of the files the agent may edit
            (default: every ``.py`` file that is not a test file or under a ``tests``,
            ``test`` or ``testing`` folder; those are never editable).
        title, description: override the generated bug report.
        runner: the sandbox runner (default: the shared pool).

    Raises:
        ValueError: naming the argument: a bad ``repo_path``, a malformed, unknown or
            passing id in ``failing_tests``, a ``hidden_tests`` path that is not a test
            file of the repository, an ``editable_files`` pattern matching no source.
    """
    from forgegym.sandbox.runners import get_default_runner

    files = read_repository(repo_path, max_file_bytes=max_file_bytes, max_files=max_files)
    ids = _check_ids(failing_tests, files)
    if isinstance(hidden_tests, str) or not isinstance(hidden_tests, Sequence):
        raise ValueError(f"hidden_tests: expected a list of test file paths, got {hidden_tests!r}")
    hidden_files: dict[str, str] = {}
    for raw in hidden_tests:
        try:
            path = validate_relative_path(str(raw))
        except ValueError as exc:
            raise ValueError(f"hidden_tests: {raw!r}: {exc}") from None
        if path not in files or not is_test_file(path):
            raise ValueError(
                f"hidden_tests: {raw!r} is not a test file (test_*.py) of the repository"
            )
        hidden_files[path] = files.pop(path)
    for test_id in ids:
        if test_id.partition("::")[0] in hidden_files:
            raise ValueError(f"failing_tests: {test_id!r} is in a hidden_tests file")
    visible_tests = tuple(
        p for p in sorted(files) if is_test_file(p) and PurePosixPath(p).name != "conftest.py"
    )
    editable = _editable(files, editable_files)
    run = runner or get_default_runner()
    start = _run_tests(run, files, visible_tests, None, timeout_s)
    if start.status is not RunStatus.COMPLETED:
        raise ValueError(
            f"repo_path: the visible tests did not run to completion ({start.status.value}: "
            f"{start.detail or start.stderr_tail[-300:]})"
        )
    verdicts = start.verdicts
    for test_id in ids:
        if test_id not in verdicts:
            raise ValueError(
                f"failing_tests: {test_id!r} is not collected; collected: {sorted(verdicts)[:10]}"
            )
        if verdicts[test_id]:
            raise ValueError(f"failing_tests: {test_id!r} passes on the unmodified repository")
    hidden_ids: list[str] = []
    hidden_failing: list[str] = []
    if hidden_files:
        hidden_start = _run_tests(run, files, sorted(hidden_files), hidden_files, timeout_s)
        if hidden_start.status is not RunStatus.COMPLETED or not hidden_start.verdicts:
            raise ValueError(
                f"hidden_tests: did not run to completion ({hidden_start.status.value}: "
                f"{hidden_start.detail or hidden_start.stderr_tail[-300:]})"
            )
        hidden_ids = sorted(hidden_start.verdicts)
        hidden_failing = [t for t in hidden_ids if not hidden_start.verdicts[t]]
    passing = [t for t in sorted(verdicts) if verdicts[t]]
    digest = hashlib.sha256(
        "\0".join(f"{p}\0{c}" for p, c in sorted({**files, **hidden_files}.items())).encode()
        + "\0".join(ids).encode()
    ).hexdigest()[:10]
    name = Path(repo_path).resolve().name or "repo"
    hidden = RepoHidden(
        failing_tests=ids,
        passing_tests=passing,
        hidden_files=hidden_files,
        hidden_ids=hidden_ids,
        hidden_failing=hidden_failing,
    )
    report = _report(start, ids)
    text = description or (
        f"These tests of the repository fail:\n\n```\n{report}\n```\n\n"
        f"Fix the code so that they pass, without breaking the tests that pass now"
        + (" (hidden tests will also be run)" if hidden_files else "")
        + ". The test files are read-only; edit the source files. Submit when done."
    )
    return Task(
        task_id=f"bugfix/repo/{name}/{digest}",
        family=FAMILY,
        difficulty=1,
        title=title or f"Make {len(ids)} failing test{'s' if len(ids) > 1 else ''} of {name} pass",
        description=text,
        files=files,
        editable_files=editable,
        visible_test_files=visible_tests,
        visible_test_ids=tuple(sorted(verdicts)),
        hidden=hidden.model_dump(),
        metadata={"repo": name, "n_failing": len(ids), "n_hidden": len(hidden_ids)},
    )


# ----------------------------------------------------------------------- grading
class RepoGrader:
    """Grades repository tasks (see the module doc); implements
    :class:`~forgegym.grading.batch.Grader`.

    Args:
        weights: overrides of :data:`DEFAULT_REPO_WEIGHTS`.
        timeout_s: wall limit of each test run.
    """

    def __init__(self, weights: Mapping[str, float] | None = None, timeout_s: float = 20.0):
        self.weights = merge_weights(DEFAULT_REPO_WEIGHTS, weights, argument="weights")
        self.timeout_s = float(timeout_s)

    def _static_gates(self, sub: Submission) -> tuple[list[str], list[str]]:
        from forgegym.envs.bugfix.grader import scan_hardcoded_expectations

        task = sub.task
        gates, notes, final = limit_and_compile_gates(sub, task.editable_files)
        if final:
            return gates, notes
        changed = {p: c for p, c in sub.files.items() if c != task.files.get(p)}
        pristine = {p: task.files[p] for p in task.editable_files}
        findings: list[HackFinding] = scan_patch(pristine, dict(sub.files), task.visible_test_files)
        tests = [task.files[p] for p in task.visible_test_files]
        for path in changed:
            if path in pristine:
                findings += scan_hardcoded_expectations(pristine[path], changed[path], path, tests)
        return gate_hack_findings(gates, notes, findings)

    def jobs(self, submission: Submission) -> list[Job]:
        gates, notes = self._static_gates(submission)
        submission.grading_state["bugfix-repo"] = (gates, notes)
        if gates:
            return []
        task = submission.task
        hidden = RepoHidden.model_validate(task.hidden)
        jobs: list[Job] = [
            PytestJob(
                workdir=str(submission.materialise()),
                targets=list(task.visible_test_files),
                expected_ids=list(task.visible_test_ids),
                timeout_s=self.timeout_s,
            )
        ]
        if hidden.hidden_files:
            jobs.append(
                PytestJob(
                    workdir=str(submission.materialise(dict(hidden.hidden_files))),
                    targets=sorted(hidden.hidden_files),
                    expected_ids=list(hidden.hidden_ids),
                    timeout_s=self.timeout_s,
                )
            )
        return jobs

    def score(self, submission: Submission, results: Sequence[Any]) -> RewardBreakdown:
        state = submission.grading_state.pop("bugfix-repo", None)
        gates, notes = state if state is not None else self._static_gates(submission)
        if gates:
            return compose({}, self.weights, gates=gates, notes=notes)
        task = submission.task
        hidden = RepoHidden.model_validate(task.hidden)
        visible = results[0]
        assert isinstance(visible, PytestResult)
        verdicts = dict(visible.verdicts)
        if hidden.hidden_files:
            assert isinstance(results[1], PytestResult)
            verdicts.update(results[1].verdicts)
        f2p_ids = [*hidden.failing_tests, *hidden.hidden_failing]
        p2p_ids = [
            *hidden.passing_tests,
            *(t for t in hidden.hidden_ids if t not in hidden.hidden_failing),
        ]
        fixed = sum(verdicts.get(t, False) for t in f2p_ids)
        f2p = fixed / len(f2p_ids)
        broken = sum(not verdicts.get(t, False) for t in p2p_ids)
        regression = broken / len(p2p_ids) if p2p_ids else 0.0
        pristine = {p: task.files[p] for p in task.editable_files}
        stats = diff_stats(pristine, submission.files)
        efficiency = 1.0 - (submission.steps_used - 1) / max(1, submission.max_steps)
        efficiency = min(1.0, max(0.0, efficiency))
        try:
            lint = lint_score(lint_sources(pristine), lint_sources(dict(submission.files)))
        except LintError:
            lint = 1.0
        terms = {
            "hidden": f2p,
            "visible": visible.pass_rate * f2p,
            "lint": lint * f2p,
            "diff": diff_size_score(stats, hidden.diff_budget) * f2p,
            "efficiency": efficiency * f2p,
            "notes": 0.0,
            "regression": regression,
            "noop": 1.0 if f2p == 0.0 else 0.0,
        }
        details = {
            "hidden": f"{fixed}/{len(f2p_ids)} fail-to-pass tests pass"
            + (f" ({len(hidden.hidden_failing)} hidden)" if hidden.hidden_failing else ""),
            "visible": f"{sum(visible.verdicts.values())}/{len(visible.verdicts)}",
            "regression": f"{broken}/{len(p2p_ids)} pass-to-pass tests broken",
            "diff": f"{stats.lines_changed} lines",
            "noop": "unchanged code" if f2p == 0.0 and is_noop(pristine, submission.files) else "",
        }
        if visible.status is not RunStatus.COMPLETED:
            notes = [*notes, f"visible tests run: {visible.status.value}"]
        return compose(terms, self.weights, kinds=_KINDS, details=details, notes=notes)


class RepoAwareGrader:
    """The Bugfix env's grader: the bank's tasks go to ``bank_grader``, repository tasks
    (:func:`is_repo_task`) to ``repo_grader``, so a ``TaskList`` may mix both."""

    def __init__(self, bank_grader: Any, repo_grader: RepoGrader) -> None:
        self.bank_grader = bank_grader
        self.repo_grader = repo_grader

    def _for(self, submission: Submission) -> Any:
        return self.repo_grader if is_repo_task(submission.task) else self.bank_grader

    def jobs(self, submission: Submission) -> list[Job]:
        return list(self._for(submission).jobs(submission))

    def score(self, submission: Submission, results: Sequence[Any]) -> RewardBreakdown:
        return self._for(submission).score(submission, results)  # type: ignore[no-any-return]

    def prepare(self, submissions: Sequence[Submission]) -> None:
        """Batch grading's optional hook: the bank grader's, on its own submissions only."""
        prepare = getattr(self.bank_grader, "prepare", None)
        mine = [s for s in submissions if not is_repo_task(s.task)]
        if callable(prepare) and mine:
            prepare(mine)

    @property
    def weights(self) -> dict[str, float]:
        """The bank grader's term weights."""
        return dict(self.bank_grader.weights)

    @property
    def timeout_s(self) -> float:
        return float(self.bank_grader.timeout_s)

    def close(self) -> None:
        close = getattr(self.bank_grader, "close", None)
        if callable(close):
            close()
