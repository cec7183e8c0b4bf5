"""The pytest command line of a sandboxed run: the trusted ini file, the project's and the
job's ini overrides, and the fixed reporting options. Standard library only.
"""

from __future__ import annotations

import os
from typing import Any


def _ini_overrides(options: dict[str, Any]) -> list[str]:
    """``-o key=value`` pairs (the parent validated the keys; each is one argv entry)."""
    out: list[str] = []
    for key, value in sorted(options.items()):
        out += ["-o", f"{key}={value}"]
    return out


def _project_overrides(project: dict[str, Any] | None) -> list[str]:
    """A user's repository (its own configuration is the ``-c`` file): its addopts as the
    parent reduced them, no required plugins (plugin autoload is off: they are not
    loaded) and no ``pythonpath`` (relative to the staged file; the job's import roots
    are on ``sys.path`` instead)."""
    if not project:
        return []
    import shlex

    addopts = shlex.join(str(a) for a in project.get("addopts") or [])
    return ["-o", f"addopts={addopts}", "-o", "required_plugins=", "-o", "pythonpath="]


def _pytest_args(job: dict[str, Any], ini: str) -> list[str]:
    workdir = job["workdir"]
    targets = job["targets"]
    for t in targets:
        path = t.split("::", 1)[0]
        if t.startswith("-") or os.path.isabs(path) or ".." in path.split("/"):
            raise ValueError(f"invalid target {t!r}")
    return [
        "-c",
        ini,
        f"--rootdir={workdir}",
        "-q",
        "-p",
        "no:cacheprovider",
        *([] if job.get("conftest") else ["--noconftest"]),
        *_project_overrides(job.get("project")),
        *_ini_overrides(job.get("ini_options") or {}),
        "--tb=no",
        "-rN",
        "--show-capture=no",
        "--no-header",
        "--color=no",
        "-o",
        "console_output_style=classic",
        *targets,
    ]
