"""Run jobs in sandboxed children: one interface, two implementations.

* :class:`ForkServerRunner` (default): a pool of warm zygote interpreters that have already
  imported pytest and the harness; each job forks a fresh child from one of them.
* :class:`SubprocessRunner` (baseline / fallback): a fresh ``python -I`` per job.

Both run the same harness under the same isolation (see ``isolation.py``) and the parent
decides the outcome (``_decide``): only a clean worker exit with complete records and the
end-of-run sentinel (and, if given, the expected collected ids) is ``COMPLETED``.

Output policy: the child's stdout+stderr are read concurrently with a hard cap of
``job.output_limit_bytes`` in total; going over it kills the tree at once and the status is
``OUTPUT_LIMIT``. Only the last ``TAIL_BYTES`` of each stream are kept (``*_tail``), so
memory in the parent is bounded no matter what the child writes. The report channel has
its own cap (``REPORT_LIMIT_BYTES``). Note that pytest itself captures test output into a
temporary file inside the workspace (bounded by RLIMIT_FSIZE), so under pytest only
output that bypasses capture reaches the pipes.

Hash seeds: ``python_hash_seed`` is fixed at interpreter start, so the fork server keeps
zygotes per seed (``None`` = one random seed per zygote, shared by the forks of that zygote;
pass explicit seeds when runs must differ).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import queue
import selectors
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from forgegym.sandbox import confinement, isolation
from forgegym.sandbox.harness import read_report, recv_frame, send_frame
from forgegym.sandbox.jobs import (
    CallJob,
    CallOutcome,
    CallResult,
    Frame,
    Job,
    PytestJob,
    PytestResult,
    Result,
    RunStatus,
    TestOutcome,
    TestRecord,
)

__all__ = [
    "ForkServerRunner",
    "Runner",
    "SubprocessRunner",
    "get_default_runner",
]

TAIL_BYTES = 16_384
REPORT_LIMIT_BYTES = 32 * 1024 * 1024
KILL_GRACE_S = 5.0  # after a kill request, how long to wait for the tree to be reaped
DRAIN_GRACE_S = 1.0  # after the worker exited, how long to wait for pipe EOF
ZYGOTE_START_TIMEOUT_S = 60.0

JOB_FILES_LIMIT_BYTES = 64 * 1024 * 1024  # a job's files, as shipped into the sandbox

# Executed by ``python -c``: sets ``sys.path`` to the runtime directories, registers
# ``forgegym`` and ``forgegym.sandbox`` as bare packages rooted in the runner's *stage*
# (copies of the few trusted modules that run in the child: never forgegym's source tree,
# data or references; forgegym/__init__.py is never run) and enters the harness.
_BOOT = """\
import sys, importlib.machinery as m, types
sys.path[:] = {path!r}
for name, path in (("forgegym", {pkg!r}), ("forgegym.sandbox", {pkg!r} + "/sandbox")):
    if name not in sys.modules:
        mod = types.ModuleType(name)
        mod.__path__ = [path]
        mod.__spec__ = m.ModuleSpec(name, None, is_package=True)
        mod.__spec__.submodule_search_locations = [path]
        sys.modules[name] = mod
from forgegym.sandbox.harness import main
main(sys.argv[1:])
"""

_TRUSTED_INI = """\
# Written by the trusted parent outside any workspace; passed with -c.
[pytest]
addopts =
python_files = test_*.py *_test.py
python_classes = Test
python_functions = test
xfail_strict = false
"""


def _interpreter(
    hash_seed: int | None, stage: str, confined: bool, args: list[str]
) -> tuple[list[str], dict[str, str]]:
    """argv and environment of a fresh, isolated interpreter running the harness with
    ``args``: inside bubblewrap's minimal root when ``confined``."""
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    boot = _BOOT.format(pkg=os.path.join(stage, "forgegym"), path=confinement.sandbox_path())
    python = confinement.sandbox_python() if confined else sys.executable
    if hash_seed is None:
        flags = ["-I", "-S"]
    else:
        # -I would also ignore PYTHONHASHSEED: use -s (+ -P) with a scrubbed environment.
        env["PYTHONHASHSEED"] = str(hash_seed)
        flags = ["-s", "-S", "-P"] if sys.version_info >= (3, 11) else ["-s", "-S"]
    command = [python, *flags, "-c", boot, *args]
    if confined:
        return confinement.bwrap_argv(stage, command, env), {}
    return command, env


def _in_cgroup(argv: list[str], cgroup: str | None) -> list[str]:
    """Start ``argv`` inside ``cgroup`` (a pids cgroup the parent made): the sandbox has no
    /sys, so the parent bounds and counts its whole tree from outside."""
    if cgroup is None or not os.path.exists("/bin/sh"):
        return argv
    return ["/bin/sh", "-c", 'echo 0 > "$0/cgroup.procs" && exec "$@"', cgroup, *argv]


#: Processes of an idle confined zygote's tree: bwrap, bwrap's init of the PID namespace,
#: the zygote.
_IDLE_TREE = 3


def _snapshot(workdir: str) -> list[list[Any]]:
    """The job's files as ``[[relpath, base64, executable], ...]``: regular files only
    (symlinks and special files are not shipped), at most ``JOB_FILES_LIMIT_BYTES``."""
    out: list[list[Any]] = []
    total = 0
    root = os.path.abspath(workdir)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            total += st.st_size
            if total > JOB_FILES_LIMIT_BYTES:
                raise ValueError(f"job files over {JOB_FILES_LIMIT_BYTES} bytes")
            with open(path, "rb") as f:
                data = f.read()
            rel = os.path.relpath(path, root)
            out.append([rel, base64.b64encode(data).decode("ascii"), bool(st.st_mode & 0o111)])
    return out


def _trusted_modules(job: Job) -> list[str]:
    names = [hook.target.partition(":")[0] for hook in job.setup_hooks]
    if isinstance(job, CallJob):
        names += [call.target.partition(":")[0] for call in job.calls]
    return [n for n in names if n.startswith("forgegym.")]


# ============================================================================ run state


class _Control(ABC):
    """How the parent observes and stops one child tree (zygote-mediated or direct)."""

    finished = False
    worker_pid: int | None = None
    worker_status: int | None = None
    cpu_s = 0.0
    max_rss_kb = 0
    detail = ""
    residue: str | None = None

    @abstractmethod
    def filenos(self) -> list[int]: ...

    @abstractmethod
    def on_ready(self, fd: int) -> None: ...

    @abstractmethod
    def kill(self) -> None: ...

    @abstractmethod
    def abandon(self) -> None:
        """Last resort when the tree was not reaped in time."""


class _Streams:
    """Reads report/stdout/stderr of one run with byte caps."""

    def __init__(self, report_r: int, out_r: int, err_r: int, output_limit: int) -> None:
        self.fds = {report_r: "report", out_r: "out", err_r: "err"}
        self.report = bytearray()
        self.tails = {"out": bytearray(), "err": bytearray()}
        self.output_bytes = 0
        self.output_limit = output_limit
        self.over_limit = False
        for fd in self.fds:
            os.set_blocking(fd, False)

    def read(self, fd: int) -> bool:
        """Read what is available; False at EOF (fd closed)."""
        kind = self.fds[fd]
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return True
        if not chunk:
            os.close(fd)
            del self.fds[fd]
            return False
        if kind == "report":
            if len(self.report) + len(chunk) > REPORT_LIMIT_BYTES:
                self.over_limit = True
            else:
                self.report += chunk
        else:
            self.output_bytes += len(chunk)
            if self.output_bytes > self.output_limit:
                self.over_limit = True
            tail = self.tails[kind]
            tail += chunk
            if len(tail) > TAIL_BYTES:
                del tail[: len(tail) - TAIL_BYTES]
        return True

    def close(self) -> None:
        for fd in list(self.fds):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()

    def tail(self, kind: str) -> str:
        return bytes(self.tails[kind]).decode("utf-8", "replace")


def _drive(control: _Control, streams: _Streams, timeout_s: float) -> tuple[bool, bool]:
    """Pump events until the tree is reaped; enforce wall time and output caps.
    Returns ``(timed_out, output_exceeded)``."""
    sel = selectors.DefaultSelector()
    for fd in streams.fds:
        sel.register(fd, selectors.EVENT_READ, "stream")
    for fd in control.filenos():
        sel.register(fd, selectors.EVENT_READ, "control")
    start = time.monotonic()
    deadline = start + timeout_s
    timed_out = exceeded = False
    killed_at: float | None = None
    finished_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if control.finished:
                finished_at = finished_at or now
                if not streams.fds or now - finished_at > DRAIN_GRACE_S:
                    break
                wait = finished_at + DRAIN_GRACE_S - now
            elif killed_at is not None:
                if now - killed_at > KILL_GRACE_S:
                    control.abandon()
                    break
                wait = killed_at + KILL_GRACE_S - now
            elif now >= deadline:
                timed_out = True
                control.kill()
                killed_at = now
                continue
            else:
                wait = deadline - now
            for key, _ in sel.select(max(wait, 0.0)):
                if key.data == "stream":
                    if not streams.read(key.fd):
                        sel.unregister(key.fd)
                else:
                    control.on_ready(key.fd)
                    if control.finished:
                        for fd in control.filenos():
                            with contextlib.suppress(KeyError, ValueError):
                                sel.unregister(fd)
            if streams.over_limit and killed_at is None and not control.finished:
                exceeded = True
                control.kill()
                killed_at = time.monotonic()
            elif streams.over_limit:
                exceeded = True
    finally:
        sel.close()
        streams.close()
    return timed_out, exceeded


def _parse_report(data: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """Protocol lines; second item is a reason if the stream is malformed, unauthenticated
    or reports tampering (see :func:`forgegym.sandbox.harness.read_report`)."""
    return read_report(data)


def _describe_status(status: int | None) -> str:
    if status is None:
        return "worker status unknown"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return f"worker killed by {name}"
    return f"worker exited with code {os.waitstatus_to_exitcode(status)}"


def _decide(
    job: Job,
    control: _Control,
    streams: _Streams,
    timed_out: bool,
    exceeded: bool,
    wall_s: float,
) -> Result:
    """The trusted verdict on how the run ended."""
    lines, malformed = _parse_report(bytes(streams.report))
    status = control.worker_status
    end_idx = next((i for i, obj in enumerate(lines) if obj.get("t") == "end"), None)
    end = lines[end_idx] if end_idx is not None else None
    internal = next((obj for obj in lines if obj.get("t") == "internal"), None)
    cpu_limit = job.cpu_limit_s or (job.timeout_s + 1.0)

    verdict: RunStatus
    detail = control.detail
    if timed_out:
        verdict, detail = RunStatus.TIMEOUT, f"wall time limit {job.timeout_s:g}s exceeded"
    elif exceeded:
        verdict, detail = RunStatus.OUTPUT_LIMIT, f"output over {job.output_limit_bytes} bytes"
    elif (
        status is not None
        and os.WIFSIGNALED(status)
        and (
            os.WTERMSIG(status) == signal.SIGXCPU
            or (os.WTERMSIG(status) == signal.SIGKILL and control.cpu_s >= cpu_limit)
        )
    ):
        verdict, detail = RunStatus.TIMEOUT, f"CPU time limit {cpu_limit:g}s exceeded"
    elif internal is not None:
        verdict, detail = RunStatus.INTERNAL_ERROR, str(internal.get("message", ""))[:4000]
    elif status is None or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        verdict, detail = RunStatus.CRASHED, detail or _describe_status(status)
    elif malformed:
        verdict, detail = RunStatus.CRASHED, malformed
    elif end is None:
        verdict, detail = RunStatus.CRASHED, "no end-of-run sentinel"
    elif end_idx != len(lines) - 1:
        verdict, detail = RunStatus.CRASHED, "data after the end-of-run sentinel"
    else:
        verdict = RunStatus.COMPLETED

    common = {
        "wall_s": wall_s,
        "cpu_s": control.cpu_s,
        "max_rss_kb": control.max_rss_kb,
        "residue": control.residue,
    }
    if control.residue:
        warnings.warn(
            f"a sandboxed run left something that could not be removed: {control.residue}",
            RuntimeWarning,
            stacklevel=2,
        )
    if isinstance(job, PytestJob):
        records = [_record(obj) for obj in lines if obj.get("t") == "test"]
        collected = [str(x) for x in (end or {}).get("collected", [])]
        if verdict is RunStatus.COMPLETED and end is not None:
            exitstatus = end.get("exitstatus")
            if end.get("collection_errors"):
                verdict = RunStatus.COLLECTION_ERROR
                detail = "\n".join(str(x) for x in end["collection_errors"])[:4000]
            elif exitstatus not in (0, 1, 5):
                verdict, detail = RunStatus.CRASHED, f"pytest exit status {exitstatus}"
            elif len(records) != end.get("ran"):
                verdict, detail = RunStatus.CRASHED, "records do not match the tests run"
            elif job.expected_ids is not None and set(collected) != set(job.expected_ids):
                verdict = RunStatus.ID_MISMATCH
                missing = sorted(set(job.expected_ids) - set(collected))
                extra = sorted(set(collected) - set(job.expected_ids))
                detail = f"missing {missing[:20]}, unexpected {extra[:20]}"
        return PytestResult(
            status=verdict,
            records=records,
            collected_ids=collected,
            expected_ids=job.expected_ids,
            stdout_tail=streams.tail("out"),
            stderr_tail=streams.tail("err"),
            detail=detail,
            **common,
        )
    outcomes: list[CallOutcome] = []
    calls = [obj for obj in lines if obj.get("t") == "call"]
    if verdict is RunStatus.COMPLETED and (
        end is None
        or end.get("n") != len(job.calls)
        or [c.get("index") for c in calls] != list(range(len(job.calls)))
    ):
        verdict, detail = RunStatus.CRASHED, "call outcomes incomplete"
    for obj in calls:
        if obj.get("ok") is True:
            outcomes.append(CallOutcome(ok=True, value=obj.get("value")))
        else:
            outcomes.append(
                CallOutcome(
                    ok=False,
                    error_type=str(obj.get("error_type") or "Error"),
                    message=str(obj.get("message") or ""),
                )
            )
    return CallResult(
        status=verdict,
        outcomes=outcomes,
        stderr_tail=streams.tail("err"),
        detail=detail,
        **common,
    )


def _record(obj: dict[str, Any]) -> TestRecord:
    try:
        outcome = TestOutcome(obj.get("outcome"))
    except ValueError:
        outcome = TestOutcome.ERROR
    frames = []
    for fr in obj.get("frames") or []:
        with contextlib.suppress(Exception):
            frames.append(
                Frame(path=str(fr["path"]), line=int(fr["line"]), function=str(fr["function"]))
            )
    return TestRecord(
        nodeid=str(obj.get("nodeid", "")),
        outcome=outcome,
        duration_s=float(obj.get("duration_s") or 0.0),
        error_type=None if obj.get("error_type") is None else str(obj["error_type"]),
        message=str(obj.get("message") or "")[:4000],
        frames=frames,
    )


def _internal_error(job: Job, detail: str) -> Result:
    if isinstance(job, PytestJob):
        return PytestResult(
            status=RunStatus.INTERNAL_ERROR, expected_ids=job.expected_ids, detail=detail
        )
    return CallResult(status=RunStatus.INTERNAL_ERROR, detail=detail)


# ============================================================================ interface


class Runner(ABC):
    """Runs jobs in sandboxed children. Thread-safe; use as a context manager.

    Args:
        workers: concurrent jobs (default: the CPUs this process may use).
        max_procs: processes a job may run.
        confine: run children inside bubblewrap (see ``confinement.py``). None: wherever
            it works on this machine. False: the less confined host mode (for measuring
            the cost of confinement; never for grading untrusted code).
        strict: refuse to run (``confinement.UnconfinedError``) unless fully confined.
            None: ``FORGEGYM_STRICT``.
    """

    name: str = "runner"

    def __init__(
        self,
        workers: int | None = None,
        max_procs: int = isolation.DEFAULT_MAX_PROCS,
        *,
        confine: bool | None = None,
        strict: bool | None = None,
    ):
        self.workers = max(1, workers or len(os.sched_getaffinity(0)))
        self.max_procs = max_procs
        status = confinement.confinement_status()
        if strict if strict is not None else confinement.strict_from_env():
            confinement.require_confinement(True)
        self.confined = status.namespaces if confine is None else confine
        if self.confined and not status.namespaces:
            raise confinement.UnconfinedError(
                "confine=True: bubblewrap cannot run here: " + status.describe()
            )
        self._pid = os.getpid()
        self._closed = False
        self._setup_dirs()

    def _setup_dirs(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="forgegym-runner-")
        os.chmod(self._dir, 0o755)
        # The stage: the only forgegym files a child can see (read-only, code only).
        self._stage = os.path.join(self._dir, "stage")
        confinement.stage_trusted(self._stage)
        self._ini = os.path.join(self._stage, "trusted-pytest.ini")
        with open(self._ini, "w") as f:
            f.write(_TRUSTED_INI)
        os.chmod(self._ini, 0o644)
        # Host mode only: where each job's fresh copy is made. A sibling of the stage
        # (pytest's confcutdir is the ini's directory: no parent of a job dir between it
        # and the stage's parent is collected).
        self._jobroot = self._dir
        binds, _ = confinement.runtime_binds()
        self._read = sorted({dest for _, dest in binds} | {self._stage})
        self._seccomp = os.path.join(self._stage, "seccomp.bpf")

    def _payload(self, job: Job) -> dict[str, Any]:
        for module in _trusted_modules(job):
            confinement.stage_module(self._stage, module)
        payload = job.model_dump(mode="json")
        # Where the job's copy will be (the child never learns the host path of the
        # directory it was made from: every run looks the same from inside).
        payload["workdir"] = isolation.JOB_DIR
        payload["_ini"] = self._ini
        payload["_max_procs"] = self.max_procs
        payload["_confined"] = self.confined
        payload["_jobroot"] = None if self.confined else self._jobroot
        payload["_read"] = self._read
        payload["_seccomp"] = self._seccomp if os.path.exists(self._seccomp) else None
        payload["_tmpfs_mb"] = isolation.DEFAULT_JOB_TMPFS_MB
        return payload

    def run(self, job: Job) -> Result:
        """Run one job and return the parent's verdict. Never raises for job failures;
        a forgegym bug is reported as ``INTERNAL_ERROR``."""
        if self._closed:
            raise RuntimeError(f"{self.name} runner is closed")
        if not isinstance(job, (PytestJob, CallJob)):
            raise TypeError(f"expected PytestJob or CallJob, got {type(job).__name__}")
        if not os.path.isdir(job.workdir):
            return _internal_error(job, f"workdir {job.workdir!r} is not a directory")
        try:
            return self._run(job)
        except Exception:  # noqa: BLE001 - a runner bug must not crash the env step
            return _internal_error(job, traceback.format_exc()[-4000:])

    def run_many(self, jobs: Sequence[Job]) -> list[Result]:
        """Run jobs concurrently over ``workers`` slots; results in input order.

        Jobs start grouped by hash seed (stable within a seed): a warm zygote serves only
        its own seed, so interleaved seeds would restart zygotes over and over."""
        if len(jobs) <= 1:
            return [self.run(job) for job in jobs]
        seeds: dict[int | None, int] = {}
        for job in jobs:
            seeds.setdefault(getattr(job, "python_hash_seed", None), len(seeds))
        order = sorted(
            range(len(jobs)), key=lambda i: seeds[getattr(jobs[i], "python_hash_seed", None)]
        )
        with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:
            done = list(pool.map(self.run, [jobs[i] for i in order]))
        results: list[Result] = [done[0]] * len(jobs)
        for position, index in enumerate(order):
            results[index] = done[position]
        return results

    @abstractmethod
    def _run(self, job: Job) -> Result: ...

    def close(self) -> None:
        """Release processes and the runner's private directory."""
        self._closed = True
        if os.getpid() == self._pid:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} workers={self.workers} confined={self.confined}>"


# ============================================================================ subprocess


class _ProcControl(_Control):
    """Direct child interpreter (the baseline): ctl pipe + pidfd of the process."""

    def __init__(self, proc: subprocess.Popen[bytes], ctl_r: int, confined: bool) -> None:
        self.proc = proc
        self.confined = confined  # pids the child reports are of its own namespace
        self.ctl_r = ctl_r
        os.set_blocking(ctl_r, False)
        self.pidfd = os.pidfd_open(proc.pid)
        self.buf = b""
        self.cgroup: str | None = None
        self.pidns = False

    def filenos(self) -> list[int]:
        return [self.ctl_r, self.pidfd]

    def _read_ctl(self) -> None:
        while True:
            try:
                chunk = os.read(self.ctl_r, 4096)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            parts = line.decode().split()
            if parts[:1] == ["pid"] and len(parts) == 3:
                self.worker_pid, self.pidns = int(parts[1]), parts[2] == "1"
            elif parts[:1] == ["status"] and len(parts) == 2:
                self.worker_status = int(parts[1])
            elif parts[:1] == ["cgroup"] and len(parts) == 2:
                self.cgroup = parts[1]
            elif parts[:1] == ["residue"]:
                with contextlib.suppress(ValueError):
                    self.residue = str(json.loads(line.decode()[len("residue ") :]))

    def on_ready(self, fd: int) -> None:
        if fd == self.ctl_r:
            self._read_ctl()
            return
        _, status, ru = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.cpu_s = ru.ru_utime + ru.ru_stime
        self.max_rss_kb = ru.ru_maxrss
        self._read_ctl()
        if self.worker_status is None:
            self.detail = f"supervisor ended without worker status ({_describe_status(status)})"
        self.finished = True

    def kill(self) -> None:
        if self.confined:
            # bubblewrap (--die-with-parent) takes the whole sandbox, PID namespace and
            # all, down with it.
            with contextlib.suppress(OSError):
                os.kill(self.proc.pid, signal.SIGKILL)
            return
        if self.worker_pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.worker_pid, signal.SIGKILL)
            if not self.pidns and self.cgroup:
                isolation.cgroup_kill(self.cgroup, exclude=self.proc.pid, rounds=5)
        else:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def abandon(self) -> None:
        self.kill()
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if not self.finished:
            _, status, ru = os.wait4(self.proc.pid, 0)
            self.proc.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_s = ru.ru_utime + ru.ru_stime
            self.max_rss_kb = ru.ru_maxrss
            self.finished = True

    def cleanup(self) -> None:
        for fd in (self.ctl_r, self.pidfd):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.cgroup:
            isolation.cgroup_remove(self.cgroup)


class SubprocessRunner(Runner):
    """Baseline: a fresh isolated interpreter per job (no warm state shared between runs)."""

    name = "subprocess"

    def _run(self, job: Job) -> Result:
        start = time.monotonic()
        data = self._payload(job)
        data["_files"] = _snapshot(job.workdir)
        payload = json.dumps(data).encode()
        report_r, report_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        argv, env = _interpreter(
            getattr(job, "python_hash_seed", None),
            self._stage,
            self.confined,
            ["subprocess", str(report_w), str(ctl_w)],
        )
        cgroup = isolation.cgroup_create(self.max_procs + _IDLE_TREE) if self.confined else None
        argv = _in_cgroup(argv, cgroup)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=out_w,
                stderr=err_w,
                pass_fds=(report_w, ctl_w),
                cwd=self._dir,
                env=env,
                start_new_session=True,
            )
        except BaseException:
            for fd in (report_r, ctl_r, out_r, err_r):
                os.close(fd)
            if cgroup:
                isolation.cgroup_remove(cgroup)
            raise
        finally:
            for fd in (report_w, ctl_w, out_w, err_w):
                os.close(fd)
        assert proc.stdin is not None
        feeder = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
        feeder.start()
        control = _ProcControl(proc, ctl_r, self.confined)
        control.cgroup = cgroup
        streams = _Streams(report_r, out_r, err_r, job.output_limit_bytes)
        try:
            timed_out, exceeded = _drive(control, streams, job.timeout_s)
        finally:
            control.cleanup()
        feeder.join(timeout=1.0)
        return _decide(job, control, streams, timed_out, exceeded, time.monotonic() - start)


def _feed(stream: Any, data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
        stream.close()


# ============================================================================ fork server


class _Spawner:
    """Starts zygotes from one long-lived thread. bubblewrap's ``--die-with-parent`` is a
    parent-death signal, which Linux delivers when the *thread* that forked it exits: a
    zygote started from a short-lived pool thread would be killed with that thread."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._jobs: queue.Queue[tuple[dict[str, Any], queue.Queue[Any]]] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="forgegym-spawner", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            kwargs, reply = self._jobs.get()
            try:
                reply.put(subprocess.Popen(**kwargs))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                reply.put(exc)

    def popen(self, **kwargs: Any) -> subprocess.Popen[bytes]:
        reply: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._jobs.put((kwargs, reply))
        out = reply.get()
        if isinstance(out, BaseException):
            raise out
        return out


_SPAWNER: _Spawner | None = None
_SPAWNER_LOCK = threading.Lock()


def _spawner() -> _Spawner:
    global _SPAWNER, _SPAWNER_LOCK
    if _SPAWNER is not None and _SPAWNER._pid != os.getpid():  # inherited across fork
        _SPAWNER, _SPAWNER_LOCK = None, threading.Lock()
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = _Spawner()
        return _SPAWNER


class _Zygote:
    """One warm interpreter (pytest + harness imported) that forks a child per job."""

    def __init__(
        self,
        hash_seed: int | None,
        cwd: str,
        max_procs: int = isolation.DEFAULT_MAX_PROCS,
        *,
        stage: str,
        confined: bool,
    ) -> None:
        self.hash_seed = hash_seed
        self.confined = confined
        self.cgroup: str | None = None
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv, env = _interpreter(
            hash_seed,
            stage,
            confined,
            ["zygote", str(child.fileno()), str(max_procs), str(int(confined))],
        )
        if confined:
            # The zygote cannot see /sys: the parent puts its whole tree in a pids cgroup.
            self.cgroup = isolation.cgroup_create(max_procs + _IDLE_TREE + 2)
            argv = _in_cgroup(argv, self.cgroup)
        try:
            self.proc = _spawner().popen(
                args=argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(child.fileno(),),
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        finally:
            child.close()
        self.sock = parent
        self.seq = 0
        self.sock.settimeout(ZYGOTE_START_TIMEOUT_S)
        try:
            hello, _ = recv_frame(self.sock)
        except (OSError, EOFError) as exc:
            self.close()
            raise RuntimeError(f"zygote failed to start: {exc}") from exc
        self.sock.settimeout(None)
        cgroup = hello.get("cgroup")
        if not confined and isinstance(cgroup, str) and cgroup.startswith("/sys/fs/cgroup/"):
            self.cgroup = cgroup
        if hello.get("op") != "ready":
            self.close()
            raise RuntimeError(f"zygote said {hello!r}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def leftovers(self) -> int:
        """Processes of this confined zygote's tree beyond the idle ones (after a run
        the job's PID namespace is gone, so this is 0 unless something escaped it)."""
        if not self.confined or not self.cgroup:
            return 0
        return max(0, len(isolation.cgroup_pids(self.cgroup)) - _IDLE_TREE)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.proc.wait(timeout=2.0)  # the zygote exits when its socket closes
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.cgroup:
            # The zygote removes its cgroup on a clean exit; after a crash this kills
            # whatever of its last run is left and removes it.
            isolation.cgroup_remove(self.cgroup)


class _ZygoteControl(_Control):
    def __init__(self, zygote: _Zygote, run_id: int) -> None:
        self.zygote = zygote
        self.run_id = run_id
        self.broken = False

    def filenos(self) -> list[int]:
        return [self.zygote.sock.fileno()]

    def on_ready(self, fd: int) -> None:
        try:
            msg, _ = recv_frame(self.zygote.sock)
        except (EOFError, OSError) as exc:
            self.broken = True
            self.finished = True
            self.detail = f"zygote died: {exc}"
            self._kill_worker()
            return
        if msg.get("id") != self.run_id:
            return
        if msg.get("op") == "started":
            self.worker_pid = msg.get("pid")
        elif msg.get("op") == "exit":
            self.worker_status = msg.get("worker_status")
            self.cpu_s = float(msg.get("cpu_s") or 0.0)
            self.max_rss_kb = int(msg.get("max_rss_kb") or 0)
            if self.worker_status is None:
                self.detail = "supervisor ended without worker status"
            if msg.get("retire"):
                self.broken = True  # something of the run could not be removed: replace it
            if msg.get("residue"):
                self.residue = str(msg["residue"])
            self.finished = True

    def _kill_worker(self) -> None:
        if self.zygote.confined:  # a pid of the sandbox's namespace: never signal it here
            with contextlib.suppress(OSError):
                self.zygote.proc.kill()
            return
        if self.worker_pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.worker_pid, signal.SIGKILL)

    def kill(self) -> None:
        try:
            send_frame(self.zygote.sock, {"op": "kill", "id": self.run_id})
        except OSError:
            self._kill_worker()

    def abandon(self) -> None:
        self.broken = True
        self._kill_worker()
        with contextlib.suppress(OSError):
            os.killpg(self.zygote.proc.pid, signal.SIGKILL)
        self.zygote.proc.kill()
        self.finished = True
        self.detail = self.detail or "child tree was not reaped in time"


class ForkServerRunner(Runner):
    """Default runner: a pool of ``workers`` warm zygotes (per hash seed), one fork per job.

    Thread-safe: ``run`` may be called from many threads; each call holds one zygote.
    A zygote that died is replaced. A pool inherited by ``fork()`` is never shared: the
    child process starts its own zygotes on first use."""

    name = "forkserver"

    def __init__(
        self,
        workers: int | None = None,
        max_procs: int = isolation.DEFAULT_MAX_PROCS,
        *,
        confine: bool | None = None,
        strict: bool | None = None,
    ) -> None:
        super().__init__(workers, max_procs, confine=confine, strict=strict)
        self._reset_pool()

    def _reset_pool(self) -> None:
        self._pid = os.getpid()
        self._cond = threading.Condition(threading.Lock())
        self._idle: dict[int | None, list[_Zygote]] = {}
        self._total = 0
        self._fallback: SubprocessRunner | None = None

    def _check_fork(self) -> None:
        if os.getpid() != self._pid:
            # Inherited across fork: the zygotes belong to the parent. Forget them (do not
            # close their processes) and start afresh; locks may have been held at fork time.
            for zygotes in self._idle.values():
                for z in zygotes:
                    with contextlib.suppress(OSError):
                        z.sock.close()
            self._reset_pool()
            self._setup_dirs()

    def warm(self, hash_seed: int | None = None) -> None:
        """Start all ``workers`` zygotes for ``hash_seed`` now (in parallel)."""
        self._check_fork()
        with self._cond:
            n = self.workers - self._total
            self._total += max(n, 0)
        if n <= 0:
            return
        with ThreadPoolExecutor(max_workers=n) as pool:
            futures = [pool.submit(self._new_zygote, hash_seed) for _ in range(n)]
        for fut in futures:
            try:
                z = fut.result()
            except Exception:  # noqa: BLE001
                with self._cond:
                    self._total -= 1
                continue
            self._release(z, broken=False)

    def _acquire(self, hash_seed: int | None) -> _Zygote | None:
        self._check_fork()
        victim: _Zygote | None = None
        with self._cond:
            while True:
                idle = self._idle.get(hash_seed)
                if idle:
                    return idle.pop()
                if self._total < self.workers:
                    self._total += 1
                    break
                others = [k for k, v in self._idle.items() if v and k != hash_seed]
                if others:  # evict an idle zygote of another seed
                    victim = self._idle[others[0]].pop()
                    break
                self._cond.wait()
        if victim is not None:
            victim.close()
        try:
            return self._new_zygote(hash_seed)
        except Exception:  # noqa: BLE001 - fall back to the baseline for this job
            with self._cond:
                self._total -= 1
                self._cond.notify()
            return None

    def _new_zygote(self, hash_seed: int | None) -> _Zygote:
        return _Zygote(
            hash_seed, self._dir, self.max_procs, stage=self._stage, confined=self.confined
        )

    def _release(self, zygote: _Zygote, broken: bool) -> None:
        if os.getpid() != self._pid:
            return
        if broken or not zygote.alive() or self._closed:
            zygote.close()
            with self._cond:
                self._total -= 1
                self._cond.notify()
            return
        with self._cond:
            self._idle.setdefault(zygote.hash_seed, []).append(zygote)
            self._cond.notify()

    def _run(self, job: Job) -> Result:
        seed = getattr(job, "python_hash_seed", None)
        zygote = self._acquire(seed)
        if zygote is None:
            if self._fallback is None:
                self._fallback = SubprocessRunner(
                    self.workers, self.max_procs, confine=self.confined
                )
            return self._fallback.run(job)
        broken = True
        try:
            result, broken = self._run_on(zygote, job)
            return result
        finally:
            self._release(zygote, broken)

    def _run_on(self, zygote: _Zygote, job: Job) -> tuple[Result, bool]:
        zygote.seq += 1
        run_id = zygote.seq
        start = time.monotonic()
        payload = self._payload(job)
        # The files go straight to the run's supervisor through their own pipe: the zygote
        # never holds them, so no later fork can find one job's files in its memory.
        files = json.dumps(_snapshot(job.workdir)).encode()
        report_r, report_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        files_r, files_w = os.pipe()
        try:
            send_frame(
                zygote.sock,
                {"op": "run", "id": run_id, "job": payload},
                [report_w, out_w, err_w, files_r],
            )
        except OSError:
            for fd in (report_r, out_r, err_r, files_w):
                os.close(fd)
            raise
        finally:
            for fd in (report_w, out_w, err_w, files_r):
                os.close(fd)
        feeder = threading.Thread(target=_feed, args=(os.fdopen(files_w, "wb"), files), daemon=True)
        feeder.start()
        control = _ZygoteControl(zygote, run_id)
        streams = _Streams(report_r, out_r, err_r, job.output_limit_bytes)
        timed_out, exceeded = _drive(control, streams, job.timeout_s)
        feeder.join(timeout=1.0)
        left = zygote.leftovers()
        if left:
            control.broken = True  # retire it: its cgroup removal kills what is left
            control.residue = f"{left} process(es) outlived the run"
        result = _decide(job, control, streams, timed_out, exceeded, time.monotonic() - start)
        return result, control.broken

    def close(self) -> None:
        if os.getpid() == self._pid:
            with self._cond:
                zygotes = [z for zs in self._idle.values() for z in zs]
                self._idle.clear()
            for z in zygotes:
                z.close()
            if self._fallback is not None:
                self._fallback.close()
        super().close()


# ============================================================================ default


_DEFAULT: Runner | None = None
_DEFAULT_LOCK = threading.Lock()


def get_default_runner() -> Runner:
    """The process-wide shared runner, created lazily and closed at exit.

    ``FORGEGYM_RUNNER=subprocess`` selects the baseline. After ``fork()`` (e.g. gymnasium's
    ``AsyncVectorEnv`` workers) the child gets its own runner instead of the parent's."""
    global _DEFAULT, _DEFAULT_LOCK
    runner = _DEFAULT
    if runner is not None and runner._pid == os.getpid() and not runner._closed:
        return runner
    if runner is not None and runner._pid != os.getpid():
        _DEFAULT_LOCK = threading.Lock()  # may have been held by another thread at fork
        _DEFAULT = None
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT._closed:
            kind = os.environ.get("FORGEGYM_RUNNER", "forkserver").strip().lower()
            confinement.warn_if_degraded()
            if kind == "subprocess" or not hasattr(os, "fork") or sys.platform != "linux":
                _DEFAULT = SubprocessRunner()
            else:
                _DEFAULT = ForkServerRunner()
        return _DEFAULT


@atexit.register
def _close_default() -> None:
    runner = _DEFAULT
    if runner is not None and runner._pid == os.getpid():
        with contextlib.suppress(Exception):
            runner.close()
