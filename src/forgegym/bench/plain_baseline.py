"""The plain-pytest baseline of the throughput bench's real-bank rows (``kind="plain"``):
what a user without forgegym writes for the same batch, a fresh copy of the project and
a plain ``python -m pytest`` of the test files forgegym runs, per completion
(:func:`measure_plain`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from forgegym.bench.process_cpu import rusage_s
from forgegym.bench.throughput_result import ThroughputRow

__all__ = ["measure_plain"]


def _plain_pytest_runs(
    env: Any, batch: tuple[list[str], list[str]], keep: list[Any]
) -> list[tuple[str, Any, list[str]]]:
    """Per completion, what the plain baseline runs: the project as forgegym grades it
    (the task's files with the completion's edits, materialised by the grader), the
    task's project configuration and the test files the grader selects for it. The
    workspaces and submissions go to ``keep`` (the caller cleans them up)."""
    from forgegym.sandbox.jobs import PytestJob
    from forgegym.sandbox.workspace import Workspace

    out = []
    for task_id, text in zip(*batch, strict=True):
        task = env.get_task(task_id)
        workspace = Workspace(
            task.files,
            task.editable_files,
            creatable=task.creatable,
            data_files=task.data_files,
            on_disk=False,
        )
        keep.append(workspace)
        submission, _ = env._parse_completion(task, workspace, text, on_disk=False)
        keep.append(submission)
        jobs = [j for j in env.grader_for(task).jobs(submission) if isinstance(j, PytestJob)]
        if jobs:
            out.append((jobs[0].workdir, jobs[0].project, list(jobs[0].targets)))
        else:  # a gate fired: the plain user runs the visible tests anyway
            from forgegym.sandbox.jobs import ProjectRun

            project = ProjectRun.model_validate(task.metadata["project_run"])
            out.append((str(submission.materialise()), project, list(task.visible_test_files)))
    return out


def _plain_one(source: str, project: Any, selected: list[str]) -> tuple[float, float]:
    """One baseline completion: a fresh copy of the project (``source``: its files with
    the completion's edits), then ``python -m pytest`` of ``selected`` with the project's
    configuration, import roots and dependency environment (plugin autoload off, as in
    the sandbox). ``(copy s, pytest s)``."""
    import shutil
    import tempfile

    began = time.perf_counter()
    scratch = tempfile.mkdtemp(prefix="forgegym-plain-")
    try:
        work = os.path.join(scratch, "project")
        shutil.copytree(source, work, symlinks=True)
        copied = time.perf_counter()
        paths = [os.path.join(work, p) for p in project.import_paths] + list(project.site_dirs)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": scratch,
            "PYTHONPATH": os.pathsep.join([work, *paths]),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONHASHSEED": "0",
        }
        config = ["-c", project.config_name] if project.config_name else []
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *config,
            "-o",
            "addopts=",
            *project.addopts,
            *selected,
        ]
        subprocess.run(command, cwd=work, env=env, capture_output=True, timeout=600, check=False)
        return copied - began, time.perf_counter() - copied
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def measure_plain(
    env_id: str,
    workers: int,
    batch: tuple[list[str], list[str]],
    env_kwargs: dict[str, Any] | None,
) -> ThroughputRow:
    """The baseline a user without forgegym writes, on the same batch: every completion
    (none shared) gets a fresh copy of the project and a plain ``python -m pytest`` of
    the test files forgegym runs for it, ``workers`` at a time. Its CPU is the pytest
    processes' (reaped children) plus this process's own (the copies)."""
    from forgegym.integrations.trl import _make_env

    env = _make_env(env_id, env_kwargs, 1).unwrapped
    keep: list[Any] = []
    try:
        return _time_plain(env_id, workers, _plain_pytest_runs(env, batch, keep))
    finally:
        for item in reversed(keep):
            (getattr(item, "cleanup", None) or item.close)()
        env.close()


def _time_plain(env_id: str, workers: int, runs: list[tuple[str, Any, list[str]]]) -> ThroughputRow:
    import resource
    from concurrent.futures import ThreadPoolExecutor

    load = os.getloadavg()[0]
    kids0 = rusage_s(resource.RUSAGE_CHILDREN)
    self0 = rusage_s(resource.RUSAGE_SELF)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        timings = list(pool.map(lambda run: _plain_one(*run), runs))
    wall = time.perf_counter() - start
    self1 = rusage_s(resource.RUSAGE_SELF)
    kids1 = rusage_s(resource.RUSAGE_CHILDREN)
    return ThroughputRow(
        env_id=env_id,
        workers=workers,
        optimised=False,
        completions=len(runs),
        wall_s=wall,
        phases_s={
            "copy": sum(c for c, _ in timings),
            "pytest": sum(t for _, t in timings),
        },
        parent_cpu_s=self1 - self0,
        children_cpu_s=kids1 - kids0,
        load=load,
        kind="plain",
        runs=len(runs),
    )
