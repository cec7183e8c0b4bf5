"""Bugfix's static anti-hack scanner (the family's :data:`~forgegym.family.SubmissionScanner`):
the shared :func:`~forgegym.rewards.antihack.scan_patch` rules over the editable files,
plus :func:`~forgegym.tasklib.literals.scan_hardcoded_expectations` (a special case for
an input the agent was shown). Every family's scanner is ``scan.py:scan_submission``
(docs/design/002-family-contract.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forgegym.core.task import Task
from forgegym.envs.bugfix.hidden import BugfixHidden
from forgegym.rewards import bounded
from forgegym.rewards.antihack import HackFinding, scan_patch, unverifiable
from forgegym.tasklib.literals import scan_hardcoded_expectations

__all__ = ["scan_submission"]


def scan_submission(task: Task, files: Mapping[str, str]) -> list[HackFinding]:
    """Every anti-hack finding of a submission's editable files (the family's scanner:
    the shared :func:`~forgegym.rewards.antihack.scan_patch` plus
    :func:`scan_hardcoded_expectations`)."""
    changed = {p: c for p, c in files.items() if c != task.files.get(p)}
    problem = bounded.files_problem(changed)
    if problem is not None:
        path, _, reason = problem.partition(": ")
        return [unverifiable(path, reason)]
    pristine = {p: task.files[p] for p in task.editable_files}
    findings = scan_patch(pristine, dict(files), task.visible_test_files)
    hidden = BugfixHidden.of(task)
    report_values: list[Any] = []
    if hidden.symptom_call is not None:
        call = hidden.calls[hidden.symptom_call]
        report_values = [*call.args, call.args, call.expected.get("value")]
    tests = [task.files[p] for p in task.visible_test_files]
    for path in task.editable_files:
        if path not in files:
            continue
        findings += scan_hardcoded_expectations(
            pristine[path],
            files[path],
            path,
            tests,
            report_values,
            task.reference.get(path),
        )
    return findings
