"""The baseline: a repository's tests run once in the sandbox as they are, before any
episode (Bugfix's :func:`~forgegym.envs.bugfix.repo.repo_task`), with what the sandbox
could not run set aside, and the host agreement report built from it.

A refused capability ends the whole worker, so one test that does what the sandbox's
runtime policy forbids would crash every run of the suite: such tests (and test files
whose collection is refused, or that cannot be collected at all) are found here, left
out of grading and reported (:func:`agreement_report`) next to the tests whose outcome
differs between the sandbox and a plain pytest run on the host
(:mod:`forgegym.tasklib.agreement`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from forgegym.sandbox.jobs import ProjectRun, PytestJob, PytestResult, RunStatus, pristine_manifest
from forgegym.sandbox.workspace import Workspace
from forgegym.tasklib.agreement import AgreementReport, TestDifference, compare, host_outcomes
from forgegym.tasklib.project import ProjectLayout

if TYPE_CHECKING:
    from forgegym.sandbox.runners import Runner

__all__ = [
    "MAX_REFUSED",
    "REPO_HASH_SEED",
    "agreement_report",
    "baseline_run",
    "run_tests",
    "violated",
]


def run_tests(
    runner: Runner,
    files: Mapping[str, str],
    targets: Sequence[str],
    extra: Mapping[str, str] | None,
    timeout_s: float,
    project: ProjectRun | None = None,
    order: Sequence[str] | None = None,
    prefix: str = "fg-repo-",
    *,
    data: Mapping[str, bytes] | None = None,
) -> PytestResult:
    """One sandbox run of the repository's ``targets`` as the project runs them (its
    configuration and conftest when ``project`` is given, a fixed hash seed), with
    ``extra`` files (hidden tests) added; ``order``: these ids in this order (``[]``:
    collect only); ``data``: the read-only data files (``Task.data_files``). Every file
    is the user's pristine code."""
    workspace = Workspace(files, (), prefix=prefix, data_files=data)
    try:
        directory = workspace.materialise({}, dict(extra or {}))
        result = runner.run(
            PytestJob(
                workdir=str(directory),
                targets=list(targets),
                timeout_s=timeout_s,
                project=project,
                conftest=project is not None,
                order=None if order is None else list(order),
                # A fixed hash seed: parametrised ids built from sets or dicts of strings
                # must be the same in every run (and in the host check).
                python_hash_seed=REPO_HASH_SEED if project is not None else None,
                # The repository as it is: all of it the user's pristine code.
                pristine=pristine_manifest({**files, **dict(extra or {})}, data),
            )
        )
        assert isinstance(result, PytestResult)
        return result
    finally:
        workspace.close()


REPO_HASH_SEED = 0
#: How many tests the runtime policy may stop before a repository is refused at make
#: (each costs one resumed run of the suite at make).
MAX_REFUSED = 100


def violated(result: PytestResult) -> bool:
    """Whether the sandbox's runtime policy ended the run (its worker exits at once)."""
    from forgegym.sandbox.policy import VIOLATION_EXIT

    return result.status is RunStatus.CRASHED and f"code {VIOLATION_EXIT}" in result.detail


def _refusal(result: PytestResult) -> str:
    """The policy's one line (``forgegym sandbox policy: refused compile``)."""
    line = result.stderr_tail.strip().splitlines()[-1:] or [result.detail]
    return line[0][:200]


def _refused_files(
    runner: Runner,
    files: Mapping[str, str],
    targets: Sequence[str],
    timeout_s: float,
    project: ProjectRun,
    prefix: str = "fg-repo-",
    *,
    data: Mapping[str, bytes] | None = None,
) -> dict[str, str]:
    """The test files whose *collection* the runtime policy stops (path -> what it
    refused), found by bisecting collection-only runs: a module the file imports calls
    e.g. ``compile`` or ``sys._getframe`` at import, so no test of the file can run."""
    refused: dict[str, str] = {}

    def visit(group: list[str]) -> None:
        collected = run_tests(
            runner, files, group, None, timeout_s, project, order=[], prefix=prefix, data=data
        )
        if not violated(collected):
            return
        if len(group) == 1:
            refused[group[0]] = _refusal(collected)
            return
        middle = len(group) // 2
        visit(group[:middle])
        visit(group[middle:])

    visit(list(targets))
    return refused


def baseline_run(
    runner: Runner,
    files: Mapping[str, str],
    targets: Sequence[str],
    timeout_s: float,
    project: ProjectRun,
    prefix: str = "fg-repo-",
    *,
    data: Mapping[str, bytes] | None = None,
) -> tuple[PytestResult, dict[str, str], dict[str, str]]:
    """The suite's sandbox run, the tests the sandbox's runtime policy stopped (id ->
    what it refused: e.g. ``compile`` of a string by the test itself), and the test
    files whose collection it stopped (path -> what it refused).

    A refused capability ends the whole worker (so an attempt cannot be retried another
    way), so one such test would crash every run of the suite. A file whose import is
    refused is found by bisecting collection-only runs and left out whole. The culprit
    test is the first test, in collection order, that has no record; the run resumes
    after it, and such tests are never run again (left out of grading, reported)."""
    result = run_tests(runner, files, targets, None, timeout_s, project, prefix=prefix, data=data)
    refused: dict[str, str] = {}
    refused_files: dict[str, str] = {}
    # A test file that cannot be collected (an import the project does not declare, a
    # data file it needs) is left out and reported, never the whole repository refused.
    for _ in range(3):
        failing = _uncollectable(result, targets)
        if not failing or set(failing) >= set(targets):
            break
        refused_files.update(failing)
        targets = [t for t in targets if t not in failing]
        result = run_tests(
            runner, files, targets, None, timeout_s, project, prefix=prefix, data=data
        )
    if not violated(result):
        return result, refused, refused_files
    collected = run_tests(
        runner, files, targets, None, timeout_s, project, order=[], prefix=prefix, data=data
    )
    if violated(collected):
        newly = _refused_files(runner, files, targets, timeout_s, project, prefix, data=data)
        refused_files.update(newly)
        targets = [t for t in targets if t not in refused_files]
        if not newly or not targets:
            # Nothing to leave out (files refused only together), or nothing left.
            return collected, refused, refused_files
        result = run_tests(
            runner, files, targets, None, timeout_s, project, prefix=prefix, data=data
        )
        if not violated(result):
            return result, refused, refused_files
        collected = run_tests(
            runner, files, targets, None, timeout_s, project, order=[], prefix=prefix, data=data
        )
        if violated(collected):
            return collected, refused, refused_files
    ids = list(collected.collected_ids)
    records = list(result.records)
    wall = result.wall_s
    while violated(result):
        done = {r.nodeid for r in records}
        culprit = next((i for i in ids if i not in done and i not in refused), None)
        if culprit is None or len(refused) >= MAX_REFUSED:
            return result, refused, refused_files
        refused[culprit] = _refusal(result)
        remaining = [i for i in ids if i not in done and i not in refused]
        result = run_tests(
            runner,
            files,
            targets,
            None,
            timeout_s,
            project,
            order=remaining,
            prefix=prefix,
            data=data,
        )
        records += result.records
        wall += result.wall_s
    merged = PytestResult(
        status=result.status,
        records=records,
        collected_ids=ids,
        stderr_tail=result.stderr_tail,
        wall_s=wall,
        detail=result.detail,
    )
    return merged, refused, refused_files


def _uncollectable(result: PytestResult, targets: Sequence[str]) -> dict[str, str]:
    """The target files a run could not collect (path -> the start of pytest's message)."""
    if result.status is not RunStatus.COLLECTION_ERROR:
        return {}
    lines = result.detail.splitlines()
    out: dict[str, str] = {}
    for target in targets:
        for i, line in enumerate(lines):
            if line.startswith(f"{target}: "):
                tail = [x.strip() for x in lines[i + 1 : i + 40] if x.strip().startswith("E ")]
                why = tail[-1][1:].strip() if tail else line[len(target) + 2 :].strip()
                out[target] = f"collection error: {why[:200]}"
                break
    return out


def agreement_report(
    start: PytestResult,
    refused: Mapping[str, str],
    refused_files: Mapping[str, str],
    *,
    root: str | Path,
    visible_tests: Sequence[str],
    layout: ProjectLayout,
    skipped: list[str],
    limit: float,
    cap: float,
    host_check: bool,
    hidden_files: Sequence[str] = (),
) -> AgreementReport:
    """The baseline's report (``info["repo_report"]``): how the sandbox's run ``start``
    agreed with a plain pytest run on the host (``host_check``; the ``hidden_files``
    stay out of it), and every test the sandbox stopped (``refused``: id -> what the
    runtime policy refused) or never collected (its file in ``refused_files``), each
    as a :class:`~forgegym.tasklib.agreement.TestDifference` left out of grading."""
    root = Path(root)
    report = AgreementReport(
        n_tests=len(start.collected_ids),
        sandbox_wall_s=start.wall_s,
        host_wall_s=None,
        host_status="not run (host_check=False)",
        dropped_addopts=list(layout.dropped_addopts),
        skipped_files=skipped,
        time_limit_s=limit,
        refused_files=dict(refused_files),
    )
    if host_check:
        # The refused files run on the host too: their tests are reported one by one.
        # Files the sandbox could not collect stay out of the host run too (one
        # collection error interrupts pytest's whole session there as well).
        uncollectable = [p for p, why in refused_files.items() if why.startswith("collection")]
        host, host_wall, status = host_outcomes(
            root,
            [t for t in visible_tests if t not in uncollectable],
            layout,
            timeout_s=max(limit, cap),
            exclude=sorted({*hidden_files, *uncollectable}),
        )
        report.host_wall_s, report.host_status = host_wall, status
        if host or status == "ran":
            report.differences = compare(
                start, host, skipped_files=skipped, host_complete=status == "ran"
            )
    host_of = {d.nodeid: d.host for d in report.differences}
    in_refused_file = {
        d.nodeid: refused_files[path]
        for d in report.differences
        if (path := d.nodeid.partition("::")[0]) in refused_files
    }
    report.differences = [
        d for d in report.differences if d.nodeid not in refused and d.nodeid not in in_refused_file
    ] + [
        TestDifference(
            nodeid,
            "stopped",
            host_of.get(nodeid, "not compared"),
            f"runtime policy ({why}): the sandbox forbids it; never run",
        )
        for nodeid, why in refused.items()
    ]
    report.differences += [
        TestDifference(
            nodeid,
            "stopped",
            host_of[nodeid],
            (
                f"{why} (its file: left out; pytest on the host collects it)"
                if why.startswith("collection error")
                else f"runtime policy ({why}) while collecting its file: the sandbox forbids "
                "it; the whole file is never run"
            ),
        )
        for nodeid, why in sorted(in_refused_file.items())
    ]
    # Tests the sandbox never collected count too (as disagreeing), so ``agreeing`` is
    # out of every test of the suite.
    report.n_tests += len(in_refused_file)
    return report
