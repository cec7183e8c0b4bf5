"""Does the sandbox agree with the host? A repository's suite run both ways at ``make``.

The pristine repository's tests run once in the sandbox (the baseline, whose wall time
sets the episode's time limits) and once as a plain ``python -m pytest`` on the host,
in a temporary copy of the whole repository (binary files included) with the same
dependency environment, the same reduced ``addopts`` and plugin autoload off, so the
two runs differ only by the sandbox. Every test whose outcome differs is reported
with its cause where the sandbox's error tells it (network, a missing dependency, a
file outside the copy, a path assumption, the sandbox's process limit) and is left out
of grading.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgegym.sandbox.jobs import PytestResult, RunStatus, TestOutcome, TestRecord
from forgegym.tasklib.project import SKIP_DIRS, ProjectLayout

__all__ = [
    "AgreementReport",
    "TestDifference",
    "compare",
    "host_outcomes",
    "time_limit",
]

#: The host run's reporter: a pytest plugin written outside the copy, loaded with -p.
_HOST_PLUGIN = """\
import json, os

_OUT = os.environ["FORGEGYM_HOST_REPORT"]
_SEEN = {}


def pytest_runtest_logreport(report):
    outcome = report.outcome
    if report.when != "call" and outcome == "failed":
        outcome = "error"
    if report.when == "call" and hasattr(report, "wasxfail"):
        outcome = "xfailed" if outcome == "skipped" else "xpassed"
    prev = _SEEN.get(report.nodeid)
    if prev in ("failed", "error") or (prev == "skipped" and outcome == "passed"):
        return
    if report.when == "teardown" and outcome == "passed":
        return
    _SEEN[report.nodeid] = outcome
    message = ""
    if report.failed and report.longrepr is not None:
        message = str(getattr(report.longrepr, "reprcrash", None) or "")[:300]
    with open(_OUT, "a", encoding="utf-8") as f:
        f.write(json.dumps({"nodeid": report.nodeid, "outcome": outcome,
                            "message": message}) + "\\n")
"""

_NETWORK = re.compile(
    r"Network is unreachable|Name or service not known|Temporary failure in name resolution"
    r"|getaddrinfo|Connection refused|nodename nor servname|No address associated"
    r"|Cannot assign requested address|Operation not permitted.*(socket|connect)",
    re.I,
)
_NETWORK_TYPES = {
    "ConnectionError",
    "ConnectionRefusedError",
    "gaierror",
    "URLError",
    "ConnectTimeout",
    "NewConnectionError",
    "MaxRetryError",
}
_THREADS = re.compile(r"can't start new thread|Resource temporarily unavailable", re.I)
_MISSING_MODULE = re.compile(r"No module named '?([\w.]+)'?")
_NO_FILE = re.compile(r"No such file or directory|does not exist|not found", re.I)
_PATH = re.compile(r"Read-only file system|Permission denied|/job\b|Operation not permitted", re.I)


@dataclass(frozen=True)
class TestDifference:
    """One test whose outcome in the sandbox differs from the host's."""

    __test__ = False

    nodeid: str
    sandbox: str
    host: str
    cause: str
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "nodeid": self.nodeid,
            "sandbox": self.sandbox,
            "host": self.host,
            "cause": self.cause,
            "detail": self.detail,
        }


@dataclass
class AgreementReport:
    """Per-test agreement of the sandbox with the host on the pristine repository."""

    n_tests: int
    sandbox_wall_s: float
    host_wall_s: float | None
    differences: list[TestDifference] = field(default_factory=list)
    host_status: str = "ran"
    dropped_addopts: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)
    time_limit_s: float = 0.0
    #: Test files whose collection the sandbox's runtime policy stops (path -> what it
    #: refused): left out of grading whole; their tests (as the host collects them) are
    #: among ``differences``.
    refused_files: dict[str, str] = field(default_factory=dict)

    @property
    def excluded(self) -> list[str]:
        """Test ids left out of grading (their outcome depends on where they run)."""
        return sorted({d.nodeid for d in self.differences})

    @property
    def agreeing(self) -> int:
        return self.n_tests - len(self.excluded)

    def to_json(self) -> dict[str, Any]:
        return {
            "n_tests": self.n_tests,
            "agreeing": self.agreeing,
            "excluded": self.excluded,
            "differences": [d.to_json() for d in self.differences],
            "sandbox_wall_s": round(self.sandbox_wall_s, 3),
            "host_wall_s": None if self.host_wall_s is None else round(self.host_wall_s, 3),
            "host_status": self.host_status,
            "dropped_addopts": list(self.dropped_addopts),
            "skipped_files": self.skipped_files[:50],
            "time_limit_s": round(self.time_limit_s, 1),
            "refused_files": [
                {
                    "path": path,
                    "cause": f"{why} while collecting it"
                    if why.startswith("collection error")
                    else f"runtime policy ({why}) while collecting it",
                }
                for path, why in sorted(self.refused_files.items())
            ],
        }


def time_limit(measured_s: float, *, multiple: float, cap_s: float, floor_s: float = 10.0) -> float:
    """The wall limit of a test run: ``multiple`` times the suite's own measured time
    (plus a second of start-up), at least ``floor_s`` and at most ``cap_s``."""
    return float(min(cap_s, max(floor_s, multiple * measured_s + 1.0)))


def _copy_repository(root: Path, dest: Path) -> None:
    def ignore(directory: str, names: list[str]) -> list[str]:
        return [n for n in names if n in SKIP_DIRS or n.endswith(".egg-info")]

    shutil.copytree(root, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)


def host_outcomes(
    root: str | Path,
    targets: Sequence[str],
    layout: ProjectLayout,
    *,
    timeout_s: float,
    exclude: Sequence[str] = (),
) -> tuple[dict[str, tuple[str, str]], float, str]:
    """``(nodeid -> (outcome, message), wall seconds, status)``: a plain pytest run of
    ``targets`` on the host, in a temporary copy of the repository at ``root`` (the files
    of ``exclude``, e.g. hidden tests, removed from it). This runs the repository's own
    code as its owner would, outside the sandbox: only the pristine repository, only at
    ``make``, and only when the caller asks (``host_check``)."""
    with tempfile.TemporaryDirectory(prefix="forgegym-host-") as tmp:
        copy = Path(tmp) / "repo"
        _copy_repository(Path(root), copy)
        for rel in exclude:
            (copy / rel).unlink(missing_ok=True)
        plugin_dir = Path(tmp) / "plugin"
        plugin_dir.mkdir()
        (plugin_dir / "forgegym_host_report.py").write_text(_HOST_PLUGIN)
        report = Path(tmp) / "report.jsonl"
        paths = [str(plugin_dir), *(str(copy / p) for p in layout.import_paths)]
        paths += list(layout.site_dirs)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON"))},
            "PYTHONPATH": os.pathsep.join(paths),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",  # the sandbox's repository runs use the same seed
            "FORGEGYM_HOST_REPORT": str(report),
        }
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "forgegym_host_report",
            "-p",
            "no:cacheprovider",
            "-q",
            "--tb=no",
            "-o",
            "addopts=" + " ".join(__import__("shlex").quote(a) for a in layout.addopts),
            "-o",
            "required_plugins=",
            f"--rootdir={copy}",
            *targets,
        ]
        start = time.monotonic()
        status = "ran"
        try:
            subprocess.run(
                command,
                cwd=copy,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            status = f"timed out after {timeout_s:.0f} s"
        wall = time.monotonic() - start
        outcomes: dict[str, tuple[str, str]] = {}
        if report.exists():
            for line in report.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                outcomes[str(row["nodeid"])] = (str(row["outcome"]), str(row.get("message", "")))
        return outcomes, wall, status


def _cause(record: TestRecord | None, skipped_files: Sequence[str]) -> tuple[str, str]:
    """The cause of a test failing in the sandbox while it passes on the host."""
    if record is None:
        return "not collected in the sandbox", ""
    text = f"{record.error_type or ''}: {record.message}"[:300]
    if record.error_type in _NETWORK_TYPES or _NETWORK.search(record.message):
        return "network (the sandbox has none)", text
    if record.error_type in ("ModuleNotFoundError", "ImportError"):
        missing = _MISSING_MODULE.search(record.message)
        name = missing.group(1) if missing else "?"
        return f"missing dependency ({name}: add it to test_dependencies)", text
    if _THREADS.search(record.message):
        return "sandbox limit (threads count against its process limit)", text
    if record.error_type == "FileNotFoundError" or _NO_FILE.search(record.message):
        named = [f for f in skipped_files if Path(f).name in record.message]
        where = f" ({', '.join(named[:3])} is not copied: a link, or over the data budget)"
        return "file outside the copy" + (where if named else ""), text
    if record.error_type in ("PermissionError", "OSError") or _PATH.search(record.message):
        return "path assumption (a read-only, absent or differently placed path)", text
    return "other (see detail)", text


def compare(
    sandbox: PytestResult,
    host: Mapping[str, tuple[str, str]],
    *,
    skipped_files: Sequence[str] = (),
    host_complete: bool = True,
) -> list[TestDifference]:
    """The tests whose outcome differs between the sandbox run and the host run. When
    the host run did not complete (``host_complete=False``: it timed out), the tests it
    never reached are not compared (nothing is known of them)."""
    records: dict[str, TestRecord] = {}
    for each in sandbox.records:
        if each.nodeid not in records or each.outcome is not TestOutcome.PASSED:
            records[each.nodeid] = each
    ids = sorted(set(sandbox.collected_ids) | set(host))
    out: list[TestDifference] = []
    for nodeid in ids:
        record = records.get(nodeid)
        mine = record.outcome.value if record is not None else "not collected"
        theirs = host.get(nodeid, ("not collected", ""))[0]
        if mine == theirs or (
            sandbox.status is not RunStatus.COMPLETED and nodeid not in sandbox.collected_ids
        ):
            continue
        if not host_complete and nodeid not in host:
            continue
        if mine != "passed" and theirs == "passed":
            cause, detail = _cause(record, skipped_files)
        elif mine == "passed":
            cause, detail = (
                f"passes only in the sandbox (host: {theirs})",
                host.get(nodeid, ("", ""))[1],
            )
        else:
            cause, detail = f"outcome differs (sandbox {mine}, host {theirs})", ""
        out.append(TestDifference(nodeid, mine, theirs, cause, detail))
    return out
