"""FlakyRepair's static anti-hack scanner (the family's :data:`~forgegym.family.SubmissionScanner`):
:func:`~forgegym.envs.flaky.antihack.hack_findings` of a submission against its task
(importing :mod:`.antihack` registers the family's own rules: chaos tampering, inflated
waits, loosened assertions), in a user's repository judged by
:func:`~forgegym.envs.flaky.repo_rules.judge_repository`. Every family's scanner is
``scan.py:scan_submission`` (docs/design/002-family-contract.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forgegym.envs.flaky.antihack import hack_findings
from forgegym.envs.flaky.hidden import FlakyHidden
from forgegym.envs.flaky.repo_rules import judge_repository
from forgegym.rewards.antihack import HackFinding

__all__ = ["scan_paths", "scan_submission"]


def scan_paths(task: Any) -> list[str]:
    """The files of ``task`` scanned as tests (its test files, and for a repository
    every test file and ``conftest.py``)."""
    return FlakyHidden.of(task).scanned_paths


def scan_submission(
    task: Any, files: Mapping[str, str], *, power_checked: bool = False
) -> list[HackFinding]:
    """The family's scanner: :func:`hack_findings` of a submission against its task (in
    a user's repository judged by :func:`~forgegym.envs.flaky.repo_rules.judge_repository`)."""
    repository = FlakyHidden.of(task).extended_chaos
    paths = scan_paths(task)
    findings = hack_findings(
        task.files, files, paths, repository=repository, power_checked=power_checked
    )
    if not repository:
        return findings
    return judge_repository(task.files, files, paths, findings)
