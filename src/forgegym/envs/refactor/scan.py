"""Refactor's static anti-hack scanner (the family's :data:`~forgegym.family.SubmissionScanner`):
every integrity problem of a submission (see :mod:`.integrity`) as a finding. Every
family's scanner is ``scan.py:scan_submission`` (docs/design/002-family-contract.md)."""

from __future__ import annotations

from collections.abc import Mapping

from forgegym.core.task import Task
from forgegym.envs.refactor.bank import original_files
from forgegym.envs.refactor.hidden import RefactorHidden
from forgegym.envs.refactor.integrity import integrity_findings
from forgegym.rewards import bounded
from forgegym.rewards.antihack import HackFinding

__all__ = ["scan_submission"]


def scan_submission(task: Task, files: Mapping[str, str]) -> list[HackFinding]:
    """The family's static anti-hack scanner: every integrity problem of a submission's
    files (see :mod:`.integrity`), as findings; over the parent's limits one
    ``unverifiable`` finding."""
    problem = bounded.files_problem(dict(files))
    if problem is not None:
        path, _, reason = problem.partition(": ")
        return [HackFinding(kind="unverifiable", path=path, line=0, detail=reason)]
    starting = {p: task.files[p] for p in task.editable_files}
    integrity = RefactorHidden.of(task).integrity
    problems = integrity_findings(files, starting, original_files(task), integrity)
    return [
        HackFinding(kind=text.split(":", 1)[0].split(" ")[0], path="", line=0, detail=text)
        for text in problems
    ]
