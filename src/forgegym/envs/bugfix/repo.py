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
included, so a fix cannot weaken what the tests check; by default also a module that
imports pytest, a helper outside those folders), and the failing tests' output
as the bug report. The ``hidden_tests`` files are never shown nor written into its
workspace; they run only at grading.

How it is graded (:class:`~forgegym.envs.bugfix.repo_grader.RepoGrader`, terms named as
the bank's Bugfix tasks so the family's ``solved`` predicate applies):

* gates: an editable file that does not compile (``compile_error``); the shared anti-hack
  scans (exit calls, pytest/builtins monkeypatching, skip markers, always-equal objects,
  ...) and special-casing of literals the tests contain, verbatim or in any derived form
  (:mod:`forgegym.rewards.antihack.special_casing`) (``hack_flagged``);
* ``hidden``: the fail-to-pass rate: of ``failing_tests`` and of the hidden tests that
  fail on the unmodified repository, the fraction that now pass;
* ``regression``: of the visible and hidden tests that passed on the unmodified
  repository (pass-to-pass), the fraction that no longer pass;
* ``behaviour`` (real-bank tasks with behaviour checks, :mod:`.behaviour`; weight 0 and
  left out otherwise): the share of the calls showing the bug the candidate gets right
  (the derived, held-out ones too). With checks, ``hidden`` is capped by it, and is 0
  when the change breaks a call the bug left right (that share adds to ``regression``);
* ``visible``, ``lint``, ``diff``, ``efficiency``: quality terms scaled by fail-to-pass;
  ``noop``: nothing repaired. ``success``: every fail-to-pass test passes, nothing
  regressed, no gate.

Tests run in the sandbox like every other job, but as the project runs them: its own
pytest configuration (``pyproject.toml``, ``setup.cfg``, ``pytest.ini``, ``tox.ini``) and
``conftest.py`` files *as they were before the episode* (trusted; the agent cannot edit
or add them, and grading restores every non-editable file), its ``addopts`` reduced to
core pytest options, its import roots (a ``src`` layout, ``pythonpath``), and its test
dependencies installed once into a cached environment bound read-only into the sandbox
(:mod:`forgegym.tasklib.depenv`). At ``make`` the suite runs once in the sandbox (its
wall time sets the time limits: ``time_limit_multiple`` times it, capped) and once as
a plain pytest run on the host; tests whose outcomes differ are reported with their
cause (``info["repo_report"]`` at reset) and left out of grading
(:mod:`forgegym.tasklib.agreement`). Grading runs the fail-to-pass tests and the test
files that import a module the agent changed (``full_suite=True``: every test file).
Tests that fail on the unmodified repository and are not in ``failing_tests`` count
nowhere.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgegym.core.navigation import closest_test_ids, match_test_ids
from forgegym.core.task import Task
from forgegym.envs.bugfix.repo_grader import RepoGrader, repo_patch_findings
from forgegym.envs.bugfix.repo_hidden import (
    DEFAULT_REPO_WEIGHTS,
    FAMILY,
    GRADING_KIND,
    RepoHidden,
    is_repo_task,
)
from forgegym.sandbox.jobs import (
    ProjectRun,
    PytestResult,
    RunStatus,
)
from forgegym.sandbox.workspace import validate_relative_path
from forgegym.tasklib.agreement import AgreementReport, time_limit
from forgegym.tasklib.baseline import (
    MAX_REFUSED,
    agreement_report,
    baseline_run,
    run_tests,
    violated,
)
from forgegym.tasklib.project import (
    MAX_FILE_BYTES,
    MAX_FILES,
    ProjectLayout,
    dependency_environment,
    imports_of_tests,
    is_package_source,
    is_test_file,
    is_test_support,
    project_layout,
    read_project,
)

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = [
    "DEFAULT_REPO_WEIGHTS",
    "GRADING_KIND",
    "RepoGrader",
    "RepoHidden",
    "is_repo_task",
    "read_repository",
    "repo_patch_findings",
    "repo_task",
]


#: An import of pytest (or its internals) anywhere in a module.
_PYTEST_IMPORT = re.compile(r"^[ \t]*(?:import|from)[ \t]+_?pytest\b", re.MULTILINE)


def _editable(
    files: Mapping[str, str],
    patterns: Sequence[str] | None,
    import_paths: Sequence[str] = (),
    layout: ProjectLayout | None = None,
) -> tuple[str, ...]:
    candidates = [
        p
        for p in sorted(files)
        if not is_test_support(p) and not (layout is not None and layout.is_test_file(p))
    ]
    if patterns is None:
        # The package only: docs, examples, build and task scripts stay read-only, and so
        # does a module that imports pytest: a test helper outside tests/ (emoji's
        # utils/testutils.py, on its pythonpath and imported by its tests), which an
        # edit could make patch the code under test. Name one in editable_files to allow.
        chosen = [
            p
            for p in candidates
            if is_package_source(p, import_paths) and not _PYTEST_IMPORT.search(files[p])
        ]
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
    repo_path: str | Path, *, max_file_bytes: int = MAX_FILE_BYTES, max_files: int = MAX_FILES
) -> dict[str, str]:
    """Every ``.py`` file under ``repo_path`` (relative POSIX path -> text), as
    :func:`~forgegym.tasklib.project.read_project` reads the project (kept for callers of
    this name; :func:`repo_task` reads its data and configuration files too).

    Raises:
        ValueError: ``repo_path`` is not a directory, has no Python file, has more than
            ``max_files`` of them, or one over ``max_file_bytes`` or not UTF-8.
    """
    files = read_project(repo_path, max_file_bytes=max_file_bytes, max_files=max_files).files
    return {path: text for path, text in files.items() if path.endswith(".py")}


def _check_ids(
    failing_tests: Any, files: Mapping[str, str], layout: ProjectLayout | None = None
) -> list[str]:
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
        if not (layout.is_test_file(path) if layout is not None else is_test_file(path)):
            patterns = layout.test_patterns if layout is not None else ("test_*.py", "*_test.py")
            raise ValueError(
                f"failing_tests: {path!r} is not a test file (python_files: {list(patterns)})"
            )
    return ids


def match_failing_tests(ids: Sequence[str], verdicts: Mapping[str, bool]) -> list[str]:
    """``failing_tests`` resolved against the tests the sandbox collected on the
    unmodified repository (``verdicts``: id -> passed), as pytest resolves node ids: an
    exact id, or a prefix at a ``::`` boundary (a parametrised test's base id
    ``file::test_f`` selects every ``test_f[...]``; ``file::Class`` its tests). A
    prefix keeps the ids it selects that fail.

    Raises:
        ValueError: an id selects nothing (naming the collected ids nearest to it), or
            selects only tests that pass.
    """
    collected = list(verdicts)
    resolved: list[str] = []
    for test_id in ids:
        selected, _ = match_test_ids([test_id], collected)
        if not selected or "::" not in test_id:
            near = closest_test_ids(test_id, collected, limit=6)
            raise ValueError(
                f"failing_tests: {test_id!r} is not collected; the nearest collected ids: {near}"
            )
        failing = [t for t in selected if not verdicts[t]]
        if not failing:
            what = "" if selected == [test_id] else f" (it selects {selected[:6]})"
            raise ValueError(
                f"failing_tests: {test_id!r}{what} passes on the unmodified repository"
            )
        resolved += [t for t in failing if t not in resolved]
    return resolved


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


#: Where the baseline runs materialise the repository.
_WORKSPACE_PREFIX = "fg-bugfix-repo-"

#: Repository-mode defaults (documented kwargs of ``gym.make``; see :func:`repo_task`).
REPO_DEFAULTS: dict[str, Any] = {
    "max_file_bytes": MAX_FILE_BYTES,
    "max_files": MAX_FILES,
    "time_limit_multiple": 3.0,
    "time_limit_cap_s": 600.0,
    "host_check": True,
    "full_suite": False,
}


def repo_task(
    repo_path: str | Path,
    failing_tests: Sequence[str],
    *,
    hidden_tests: Sequence[str] = (),
    editable_files: Sequence[str] | None = None,
    title: str | None = None,
    description: str | None = None,
    runner: Runner | None = None,
    max_file_bytes: int = REPO_DEFAULTS["max_file_bytes"],
    max_files: int = REPO_DEFAULTS["max_files"],
    timeout_s: float | None = None,
    time_limit_multiple: float = REPO_DEFAULTS["time_limit_multiple"],
    time_limit_cap_s: float = REPO_DEFAULTS["time_limit_cap_s"],
    test_dependencies: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    host_check: bool = REPO_DEFAULTS["host_check"],
) -> Task:
    """A Bugfix :class:`~forgegym.core.task.Task` from your repository.

    Runs the repository's tests once in the sandbox to check the task (every id in
    ``failing_tests`` must be collected and fail; the tests that pass become the
    pass-to-pass set) and to measure the suite's time, and once on the host to check
    that the sandbox agrees (``host_check``).

    Args:
        repo_path: the repository's root (read; nothing is written to it).
        failing_tests: pytest ids (``path/test_x.py::test_y``, relative to the root) that
            fail now and must pass after the fix.
        hidden_tests: test files (relative to the root) the agent never sees; they run at
            grading (fail-to-pass for those failing now, pass-to-pass for the others).
        editable_files: paths or ``fnmatch`` patterns of the files the agent may edit
            (default: the package's ``.py`` files; tests, files under ``tests``/``test``/
            ``testing`` folders are never editable; docs, examples, build scripts and
            modules that import pytest only when listed).
        title, description: override the generated bug report.
        runner: the sandbox runner (default: the shared pool).
        max_file_bytes, max_files: bounds on the repository's Python files (an error
            names the file over them).
        timeout_s: a fixed wall limit of a test run (default: measured, below).
        time_limit_multiple, time_limit_cap_s: the limit is this multiple of the
            baseline run's wall time, at most the cap (also the baseline's own limit).
        test_dependencies: requirements (or local paths, relative to the root) the tests
            need; default: what the repository declares (``[project]`` dependencies, its
            ``test``/``tests`` extras and groups, test requirement files).
        cache_dir: where dependency environments are cached (default
            ``$FORGEGYM_CACHE_DIR`` or ``~/.cache/forgegym``).
        host_check: compare the sandbox's outcomes with a plain pytest run on the host
            (runs the pristine repository's tests on the host once).

    Raises:
        ValueError: naming the argument: a bad ``repo_path``, a malformed, unknown or
            passing id in ``failing_tests`` (or one that fails only in the sandbox), a
            ``hidden_tests`` path that is not a test file of the repository, an
            ``editable_files`` pattern matching no source, a dependency that cannot be
            installed, a suite that does not run to completion within the cap.
    """
    from forgegym.sandbox.runners import get_default_runner

    cap, multiple, timeout_s = _check_options(
        host_check, max_file_bytes, max_files, timeout_s, time_limit_multiple, time_limit_cap_s
    )
    root = Path(repo_path)
    files, skipped, data, layout = _read(
        repo_path, max_file_bytes, max_files, test_dependencies, cache_dir
    )
    project = layout.run()
    _check_not_data(failing_tests, data, max_file_bytes)
    ids = _check_ids(failing_tests, files, layout)
    hidden_files = _split_hidden(files, hidden_tests, layout, ids)
    visible_tests = tuple(p for p in sorted(files) if layout.is_test_file(p))
    editable = _editable(files, editable_files, layout.source_roots, layout)
    run = runner or get_default_runner()
    baseline_limit = timeout_s if timeout_s is not None else cap
    start, refused, refused_files = _checked_baseline(
        run, files, visible_tests, baseline_limit, project, data
    )
    limit = (
        timeout_s
        if timeout_s is not None
        else time_limit(start.wall_s, multiple=multiple, cap_s=cap)
    )
    report = agreement_report(
        start,
        refused,
        refused_files,
        root=root,
        visible_tests=visible_tests,
        layout=layout,
        skipped=skipped,
        limit=limit,
        cap=cap,
        host_check=host_check,
        hidden_files=list(hidden_files),
    )
    visible_tests = tuple(p for p in visible_tests if p not in refused_files)
    ids = _resolve_failing(ids, refused_files, start.verdicts, report)
    hidden_run = _hidden_baseline(
        run, files, hidden_files, max(limit, baseline_limit), project, data
    )
    hidden = _repo_hidden(ids, start, report, files, hidden_files, hidden_run, layout, limit)
    return _build_task(
        root,
        files,
        hidden,
        start,
        data=data,
        editable=editable,
        visible_tests=visible_tests,
        title=title,
        description=description,
        metadata={
            "project_run": project.model_dump(mode="json"),
            "time_limit_s": limit,
            "skip_ids": sorted(refused),
            "repo_report": report.to_json(),
        },
    )


def _check_options(
    host_check: Any,
    max_file_bytes: Any,
    max_files: Any,
    timeout_s: float | None,
    time_limit_multiple: float,
    time_limit_cap_s: float,
) -> tuple[float, float, float | None]:
    """``(cap, multiple, timeout_s)`` checked (``ValueError`` naming the argument)."""
    from forgegym.core.env import check_number

    cap = check_number("time_limit_cap_s", time_limit_cap_s, low=1.0, high=3600.0)
    multiple = check_number("time_limit_multiple", time_limit_multiple, low=1.0, high=100.0)
    if timeout_s is not None:
        timeout_s = check_number("test_timeout_s", timeout_s, low=0.1, high=3600.0)
    if not isinstance(host_check, bool):
        raise ValueError(f"host_check: expected a bool, got {host_check!r}")
    if (
        isinstance(max_file_bytes, bool)
        or not isinstance(max_file_bytes, int)
        or max_file_bytes < 1
    ):
        raise ValueError(f"max_file_bytes: expected a positive int, got {max_file_bytes!r}")
    if isinstance(max_files, bool) or not isinstance(max_files, int) or max_files < 1:
        raise ValueError(f"max_files: expected a positive int, got {max_files!r}")
    return cap, multiple, timeout_s


def _read(
    repo_path: str | Path,
    max_file_bytes: int,
    max_files: int,
    test_dependencies: Sequence[str] | None,
    cache_dir: str | Path | None,
) -> tuple[dict[str, str], list[str], dict[str, bytes], ProjectLayout]:
    """The project as it is: its files, the files left out, its read-only data files and
    its layout with the cached dependency environment (:mod:`forgegym.tasklib.project`)."""
    files, skipped, data = read_project(
        repo_path, max_file_bytes=max_file_bytes, max_files=max_files
    )
    layout = project_layout(files)
    site = dependency_environment(files, repo_path, test_dependencies, cache_dir=cache_dir)
    if site is not None:
        layout = layout.with_site_dirs([str(site)])
    return files, skipped, data, layout


def _check_not_data(failing_tests: Any, data: Mapping[str, bytes], max_file_bytes: int) -> None:
    """A failing test's file copied as data (over ``max_file_bytes``) can never run."""
    for test_id in failing_tests if isinstance(failing_tests, list | tuple) else ():
        path = str(test_id).partition("::")[0]
        if path in data:
            raise ValueError(
                f"failing_tests: {path!r} ({len(data[path])} bytes) is over max_file_bytes="
                f"{max_file_bytes}: copied read-only as data, never run as a test"
            )


def _split_hidden(
    files: dict[str, str], hidden_tests: Any, layout: ProjectLayout, ids: Sequence[str]
) -> dict[str, str]:
    """The ``hidden_tests`` files, taken out of ``files`` (path -> content)."""
    if isinstance(hidden_tests, str) or not isinstance(hidden_tests, Sequence):
        raise ValueError(f"hidden_tests: expected a list of test file paths, got {hidden_tests!r}")
    hidden_files: dict[str, str] = {}
    for raw in hidden_tests:
        try:
            path = validate_relative_path(str(raw))
        except ValueError as exc:
            raise ValueError(f"hidden_tests: {raw!r}: {exc}") from None
        if path not in files or not layout.is_test_file(path):
            raise ValueError(
                f"hidden_tests: {raw!r} is not a test file (test_*.py) of the repository"
            )
        hidden_files[path] = files.pop(path)
    for test_id in ids:
        if test_id.partition("::")[0] in hidden_files:
            raise ValueError(f"failing_tests: {test_id!r} is in a hidden_tests file")
    return hidden_files


def _checked_baseline(
    runner: Runner,
    files: Mapping[str, str],
    visible_tests: Sequence[str],
    limit: float,
    project: ProjectRun,
    data: Mapping[str, bytes],
) -> tuple[PytestResult, dict[str, str], dict[str, str]]:
    """The visible suite's baseline run (:func:`~forgegym.tasklib.baseline.baseline_run`),
    refused when nothing can be graded or it did not complete."""
    start, refused, refused_files = baseline_run(
        runner, files, visible_tests, limit, project, prefix=_WORKSPACE_PREFIX, data=data
    )
    if refused_files and set(refused_files) >= set(visible_tests):
        raise ValueError(
            "repo_path: the sandbox's runtime policy stops the collection of every test "
            "file, so nothing can be graded ("
            + "; ".join(f"{path}: {why}" for path, why in sorted(refused_files.items())[:5])
            + "): a module they import does what the sandbox forbids at import"
        )
    if len(refused) >= MAX_REFUSED and violated(start):
        raise ValueError(
            f"repo_path: the sandbox's runtime policy stopped more than {MAX_REFUSED} tests "
            f"(e.g. {sorted(refused)[:3]}: {next(iter(refused.values()))}); too many to "
            "leave out one by one"
        )
    if start.status is not RunStatus.COMPLETED:
        last = (start.stderr_tail.strip().splitlines() or [""])[-1][:300]
        raise ValueError(
            f"repo_path: the visible tests did not run to completion in the sandbox within "
            f"{limit:.0f} s ({start.status.value}: "
            f"{start.detail or start.stderr_tail[-600:]}"
            + (f"; {last}" if last and last not in start.detail else "")
            + ")"
        )
    return start, refused, refused_files


def _resolve_failing(
    ids: Sequence[str],
    refused_files: Mapping[str, str],
    verdicts: Mapping[str, bool],
    report: AgreementReport,
) -> list[str]:
    """``failing_tests`` resolved against the baseline: never in a file the sandbox
    cannot collect, never failing only in the sandbox."""
    for test_id in ids:
        if test_id.partition("::")[0] in refused_files:
            path = test_id.partition("::")[0]
            raise ValueError(
                f"failing_tests: {test_id!r} is in a test file whose collection the sandbox's "
                f"runtime policy stops ({refused_files[path]}): it can never run there"
            )
    resolved = match_failing_tests(ids, verdicts)
    excluded = set(report.excluded)
    for test_id in resolved:
        if test_id in excluded:
            why = next(d for d in report.differences if d.nodeid == test_id)
            raise ValueError(
                f"failing_tests: {test_id!r} fails only in the sandbox ({why.cause}; "
                f"{why.detail}); it passes on the host"
            )
    return resolved


def _hidden_baseline(
    runner: Runner,
    files: Mapping[str, str],
    hidden_files: Mapping[str, str],
    limit: float,
    project: ProjectRun,
    data: Mapping[str, bytes],
) -> tuple[list[str], list[str]]:
    """``(hidden ids, those failing now)``: the hidden tests run once on the pristine
    repository (none without hidden tests)."""
    if not hidden_files:
        return [], []
    start = run_tests(
        runner,
        files,
        sorted(hidden_files),
        hidden_files,
        limit,
        project,
        prefix=_WORKSPACE_PREFIX,
        data=data,
    )
    if start.status is not RunStatus.COMPLETED or not start.verdicts:
        raise ValueError(
            f"hidden_tests: did not run to completion ({start.status.value}: "
            f"{start.detail or start.stderr_tail[-300:]})"
        )
    hidden_ids = sorted(start.verdicts)
    return hidden_ids, [t for t in hidden_ids if not start.verdicts[t]]


def _repo_hidden(
    ids: list[str],
    start: PytestResult,
    report: AgreementReport,
    files: Mapping[str, str],
    hidden_files: dict[str, str],
    hidden_run: tuple[list[str], list[str]],
    layout: ProjectLayout,
    limit: float,
) -> RepoHidden:
    """The grading data: fail-to-pass and pass-to-pass from the baseline, the tests left
    out (the agreement report's), the hidden tests (``hidden_run``: every id, those
    failing now), which modules each test file imports, the measured time limit."""
    hidden_ids, hidden_failing = hidden_run
    # The visible test files graded: every test file but those the sandbox cannot collect.
    visible_tests = [
        p for p in sorted(files) if layout.is_test_file(p) and p not in report.refused_files
    ]
    verdicts = start.verdicts
    excluded = set(report.excluded)
    return RepoHidden(
        failing_tests=ids,
        passing_tests=[t for t in sorted(verdicts) if verdicts[t] and t not in excluded],
        hidden_files=hidden_files,
        hidden_ids=hidden_ids,
        hidden_failing=hidden_failing,
        excluded=sorted(excluded),
        test_imports=imports_of_tests(
            {**files, **hidden_files},
            layout.import_paths,
            [*visible_tests, *sorted(hidden_files)],
        ),
        time_limit_s=limit,
    )


def _build_task(
    root: Path,
    files: dict[str, str],
    hidden: RepoHidden,
    start: PytestResult,
    *,
    data: dict[str, bytes],
    editable: tuple[str, ...],
    visible_tests: tuple[str, ...],
    title: str | None,
    description: str | None,
    metadata: dict[str, Any],
) -> Task:
    """The task: its id hashes the files and the failing ids; its bug report shows the
    failing tests' output."""
    ids = hidden.failing_tests
    digest = hashlib.sha256(
        "\0".join(f"{p}\0{c}" for p, c in sorted({**files, **hidden.hidden_files}.items())).encode()
        + "\0".join(ids).encode()
    ).hexdigest()[:10]
    name = root.resolve().name or "repo"
    text = description or (
        f"These tests of the repository fail:\n\n```\n{_report(start, ids)}\n```\n\n"
        f"Fix the code so that they pass, without breaking the tests that pass now"
        + (" (hidden tests will also be run)" if hidden.hidden_files else "")
        + ". The test files are read-only; edit the source files. Submit when done."
    )
    return Task(
        task_id=f"bugfix/repo/{name}/{digest}",
        family=FAMILY,
        difficulty=1,
        title=title or f"Make {len(ids)} failing test{'s' if len(ids) > 1 else ''} of {name} pass",
        description=text,
        files=files,
        data_files=data,
        editable_files=editable,
        visible_test_files=visible_tests,
        visible_test_ids=tuple(sorted(start.verdicts)),
        hidden=hidden.model_dump(),
        metadata={
            "repo": name,
            "n_failing": len(ids),
            "n_hidden": len(hidden.hidden_ids),
            **metadata,
        },
    )
