"""The generator's statement report: it renders a run the way the shipped bank's
statements quote theirs, so a canary that quotes its own run reads like every task
(issue #37, D3)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from forgegym.envs.bugfix.bank import BugfixTaskBank
from forgegym.envs.bugfix.generator import statement_report
from forgegym.sandbox.jobs import PytestJob
from forgegym.sandbox.runners import get_default_runner
from forgegym.sandbox.workspace import scratch_root


def test_statement_report_reproduces_the_shipped_reports() -> None:
    bank = BugfixTaskBank()
    ids = [i for i in bank.task_ids(40, seed=3) if "fails:" in bank.get(i).description][:6]
    assert len(ids) >= 4
    dirs: list[Path] = []
    jobs = []
    try:
        for task_id in ids:
            task = bank.get(task_id)
            workdir = Path(tempfile.mkdtemp(prefix="fg-test-report-", dir=scratch_root()))
            dirs.append(workdir)
            for path, content in task.files.items():
                (workdir / path).parent.mkdir(parents=True, exist_ok=True)
                (workdir / path).write_text(content, encoding="utf-8")
            jobs.append(
                PytestJob(
                    workdir=str(workdir),
                    targets=list(task.visible_test_files),
                    expected_ids=list(task.visible_test_ids),
                    timeout_s=30.0,
                )
            )
        results = get_default_runner().run_many(jobs)
        for task_id, result, workdir in zip(ids, results, dirs, strict=True):
            quoted = bank.get(task_id).description.split("fails:\n\n```\n", 1)[1]
            assert statement_report(result, workdir) == quoted.split("\n```", 1)[0], task_id
    finally:
        for directory in dirs:
            shutil.rmtree(directory, ignore_errors=True)
