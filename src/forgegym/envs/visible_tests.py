"""The visible tests of a code-family task: the sandbox job that runs them
(:func:`visible_tests_job`) and the reports the agent reads of a run
(:func:`render_test_result`) or of a request that selects nothing
(:func:`unknown_tests_message`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forgegym.core.navigation import closest_test_ids
from forgegym.core.task import Task
from forgegym.sandbox.jobs import (
    ProjectRun,
    PytestJob,
    PytestResult,
    RunStatus,
    TestOutcome,
    TestRecord,
)

__all__ = ["render_test_result", "unknown_tests_message", "visible_tests_job"]


def visible_tests_job(
    task: Task, workdir: str, tests: Sequence[str] | None = None, timeout_s: float = 20.0
) -> PytestJob:
    """A job running the task's visible tests (or the subset ``tests``) in ``workdir``.

    A task from a user's repository (``task.metadata["project_run"]``, a
    :class:`~forgegym.sandbox.jobs.ProjectRun` as JSON) runs with its pristine pytest
    configuration, conftest files, import roots and dependencies, under the time limit
    measured at ``make`` (``task.metadata["time_limit_s"]``) when that is longer."""
    extra: dict[str, Any] = {}
    project = task.metadata.get("project_run") if isinstance(task.metadata, dict) else None
    if project is not None:
        # Its ids must not depend on the hash seed (the host check uses the same one);
        # tests the sandbox's runtime policy stopped at make are never run again.
        extra = {
            "project": ProjectRun.model_validate(project),
            "conftest": True,
            "python_hash_seed": 0,
        }
        timeout_s = max(timeout_s, float(task.metadata.get("time_limit_s") or 0.0))
        skip = set(task.metadata.get("skip_ids") or ())
        if skip:
            wanted = list(tests) if tests else list(task.visible_test_ids)
            extra["order"] = [t for t in wanted if t not in skip]
    if tests:
        return PytestJob(
            workdir=workdir,
            targets=list(tests),
            expected_ids=list(tests),
            timeout_s=timeout_s,
            **extra,
        )
    return PytestJob(
        workdir=workdir,
        targets=list(task.visible_test_files),
        expected_ids=list(task.visible_test_ids) or None,
        timeout_s=timeout_s,
        **extra,
    )


def _failure_line(record: TestRecord) -> str:
    """``FAILED id at path:line in function ErrorType: message`` (the message's first
    lines, bounded)."""
    where = ""
    if record.frames:
        frame = record.frames[-1]
        where = f" at {frame.path}:{frame.line} in {frame.function}"
    message = [line.rstrip() for line in record.message.strip().splitlines() if line.strip()]
    short = " | ".join(message[:3])[:400]
    error = f"{record.error_type}: " if record.error_type else ""
    return f"{record.outcome.value.upper()} {record.nodeid}{where} {error}{short}".rstrip()


def render_test_result(result: PytestResult, *, max_chars: int = 4000) -> str:
    """A compact, model-readable report of one test run, within ``max_chars``.

    The summary line first, then every failure with its message (failed, errored,
    skipped and missing tests: what is not a pass), then the run's stderr when it did
    not complete, then the passing tests as far as they fit. What does not fit is
    counted, never silently dropped: a run with a few failures late in a large suite
    shows all of them."""
    verdicts = result.verdicts
    passed = sum(verdicts.values())
    head = f"Test run: {result.status.value}; {passed}/{len(verdicts)} passed"
    head += f", {len(verdicts) - passed} not passed." if passed < len(verdicts) else "."
    lines: list[str] = [head]
    if result.status is not RunStatus.COMPLETED and result.detail:
        lines.append(f"  ({result.detail})")
    reported = {r.nodeid for r in result.records}
    failures = [_failure_line(r) for r in result.records if r.outcome is not TestOutcome.PASSED]
    failures += [f"NOT RUN {nodeid}" for nodeid in verdicts if nodeid not in reported]
    passes = [f"PASSED {r.nodeid}" for r in result.records if r.outcome is TestOutcome.PASSED]
    stderr = ""
    if result.status is not RunStatus.COMPLETED and result.stderr_tail.strip():
        stderr = "stderr (tail):\n" + result.stderr_tail.strip()[-800:]
    # Room for the two notes of what was cut (at most ~90 characters each).
    budget = max_chars - 200
    used = len(head)

    def take(candidates: list[str], reserve: int = 0) -> list[str]:
        nonlocal used
        kept: list[str] = []
        for line in candidates:
            if used + 1 + len(line) > budget - reserve:
                break
            kept.append(line)
            used += 1 + len(line)
        return kept

    shown_failures = take(failures)
    lines += shown_failures
    if len(shown_failures) < len(failures):
        lines.append(
            f"... {len(failures) - len(shown_failures)} more failures not listed "
            "(run_tests with `tests` for fewer at a time)"
        )
    if stderr:
        lines += take([stderr[: max(0, budget - used - 1)]] if budget - used > 40 else [])
    shown_passes = take(passes)
    lines += shown_passes
    if len(shown_passes) < len(passes):
        lines.append(f"... {len(passes) - len(shown_passes)} passing tests not listed")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 20] + "\n... (truncated)"


def unknown_tests_message(unknown: Sequence[str], known: Sequence[str]) -> str:
    """The rejection of a ``run_tests`` whose ``tests`` select nothing: the requests,
    the nearest visible ids and the files the visible tests are in (bounded, however
    large the suite)."""
    near: list[str] = []
    for request in unknown[:3]:
        near += [t for t in closest_test_ids(request, known, limit=4) if t not in near]
    files = list(dict.fromkeys(t.partition("::")[0] for t in known))
    shown_files = ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
    return (
        f"run_tests rejected: unknown test ids {list(unknown)[:5]}; nothing was run. "
        f"Closest visible tests: {near[:8]}. {len(known)} visible tests in {shown_files}; "
        "give ids, files, folders or `file::test` prefixes, as pytest takes them."
    )
