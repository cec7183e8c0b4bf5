"""The runner interface and what every backend shares: how a job's result is decided.

A :class:`Runner` runs :class:`~forgegym.sandbox.jobs.Job` s in confined children and
returns their results; the trusted parent decides each outcome from the child's
authenticated report, its exit status and the limits (:func:`decide`), never from the
child's word alone. Backends: :mod:`.subprocess` (the plain baseline: a fresh
interpreter per job), :mod:`.forkserver` (the default: warm zygotes that fork a child
per job) and :mod:`.ray` (Ray actors that each own a fork-server pool).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import os
import selectors
import shutil
import stat
import sys
import tempfile
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from forgegym.sandbox import confinement, isolation
from forgegym.sandbox.atomic import write_atomic
from forgegym.sandbox.jobs import (
    CallJob,
    CallResult,
    Job,
    PytestJob,
    PytestResult,
    Result,
    RunStatus,
)
from forgegym.sandbox.runners.streams import REPORT_LIMIT_BYTES, TAIL_BYTES, Control, Streams
from forgegym.sandbox.runners.verdict import (
    WALL_TIMEOUT,
    decide,
    describe_status,
)

__all__ = [
    "feed",
    "Control",
    "DRAIN_GRACE_S",
    "FAULT_SETUP",
    "FAULT_ZYGOTE",
    "JOB_REACHABLE_FAULTS",
    "fault_cause",
    "IDLE_TREE",
    "JOB_FILES_LIMIT_BYTES",
    "KILL_GRACE_S",
    "OverloadCheck",
    "REPORT_LIMIT_BYTES",
    "Runner",
    "Streams",
    "TAIL_BYTES",
    "WALL_TIMEOUT",
    "ZYGOTE_START_TIMEOUT_S",
    "decide",
    "describe_status",
    "drive",
    "host_load",
    "in_cgroup",
    "interpreter",
    "snapshot",
]


logger = logging.getLogger(__name__)

KILL_GRACE_S = 5.0  # after a kill request, how long to wait for the tree to be reaped


DRAIN_GRACE_S = 1.0  # after the worker exited, how long to wait for pipe EOF


ZYGOTE_START_TIMEOUT_S = 60.0


JOB_FILES_LIMIT_BYTES = 64 * 1024 * 1024  # a job's files, as shipped into the sandbox


# Executed by ``python -c``: sets ``sys.path`` to the runtime directories, registers
# ``forgegym`` and ``forgegym.sandbox`` as bare packages rooted in the runner's *stage*
# (copies of the few trusted modules that run in the child: never forgegym's source tree,
# data or references; forgegym/__init__.py is never run), loads a zygote's warm test code
# (forgegym.sandbox.warmcode, when given) and enters the harness.
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
if {warm!r}:
    from forgegym.sandbox.warmcode import install
    install({warm!r})
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


def interpreter(
    hash_seed: int | None,
    stage: str,
    confined: bool,
    args: list[str],
    warm: Sequence[str] = (),
) -> tuple[list[str], dict[str, str]]:
    """argv and environment of a fresh, isolated interpreter running the harness with
    ``args``: inside bubblewrap's minimal root when ``confined``. ``warm``: warm test
    code files in the stage for a zygote to load first (:mod:`forgegym.sandbox.warmcode`)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    boot = _BOOT.format(
        pkg=os.path.join(stage, "forgegym"), path=confinement.sandbox_path(), warm=list(warm)
    )
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


def in_cgroup(argv: list[str], cgroup: str | None) -> list[str]:
    """Start ``argv`` inside ``cgroup`` (a pids cgroup the parent made): the sandbox has no
    /sys, so the parent bounds and counts its whole tree from outside."""
    if cgroup is None or not os.path.exists("/bin/sh"):
        return argv
    return ["/bin/sh", "-c", 'echo 0 > "$0/cgroup.procs" && exec "$@"', cgroup, *argv]


#: Processes of an idle confined zygote's tree: bwrap, bwrap's init of the PID namespace,
#: the zygote.
IDLE_TREE = 3


def snapshot(workdir: str) -> list[list[Any]]:
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


def drive(control: Control, streams: Streams, timeout_s: float) -> tuple[bool, bool]:
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


#: Fault causes (``Result.fault``'s prefix). ``setup``: the parent failed before the job's
#: code could run (no sandbox, ENOSPC/EAGAIN/EMFILE on the parent's side, a runner bug);
#: the code under test cannot cause it. ``zygote_died``: the warm process the job was
#: forked from died under it; the job's own code might have done that, so only a death
#: that a retry on a fresh zygote does not reproduce is the machine's.
FAULT_SETUP = "setup"
FAULT_ZYGOTE = "zygote_died"
#: Causes the code under test may reach: reproduced by the retry, they are the code's.
JOB_REACHABLE_FAULTS = frozenset({FAULT_ZYGOTE})


def host_load() -> float:
    """Runnable tasks per usable core: the 1-minute load average over the CPUs this
    process may use (0.0 where the platform has no load average)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 0.0
    return load / max(1, len(os.sched_getaffinity(0)))


@dataclass(frozen=True)
class OverloadCheck:
    """When a wall-clock time-out may be the machine's: the worker got little CPU
    (``cpu_s`` under ``cpu_share`` of its wall time) while the host was overloaded
    (``load()`` above ``threshold`` runnable tasks per usable core, at the start or the
    end of the run). Such a time-out is retried once; the retry's verdict is final, so a
    program that loops or sleeps (little CPU too) times out twice and pays: a second
    time-out is the code's even if the host is still overloaded, because a policy can
    load the host itself and must not turn its time-outs into skipped rewards.

    ``load`` is injectable so a test can simulate an overloaded host deterministically.
    """

    threshold: float = 2.0
    cpu_share: float = 0.5
    load: Callable[[], float] = host_load

    def starved(self, result: Result, load_before: float) -> bool:
        """Whether ``result`` is a wall time-out the machine may have caused."""
        if (
            result.fault is not None
            or result.status is not RunStatus.TIMEOUT
            or not result.detail.startswith(WALL_TIMEOUT)
            or result.cpu_s >= self.cpu_share * result.wall_s
        ):
            return False
        return max(load_before, self.load()) > self.threshold


def fault_cause(result: Result) -> str | None:
    """The machine-fault cause of ``result`` (the part before ``:``), or None."""
    return None if result.fault is None else result.fault.split(":", 1)[0]


def _internal_error(job: Job, detail: str) -> Result:
    fault = f"{FAULT_SETUP}: {detail.strip().splitlines()[-1] if detail.strip() else ''}"[:500]
    if isinstance(job, PytestJob):
        return PytestResult(
            status=RunStatus.INTERNAL_ERROR,
            expected_ids=job.expected_ids,
            detail=detail,
            fault=fault,
        )
    return CallResult(status=RunStatus.INTERNAL_ERROR, detail=detail, fault=fault)


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

    ``overload`` (an :class:`OverloadCheck`, or None for never) decides when a wall
    time-out is retried as possibly the machine's; assign it to change the threshold or
    to simulate load.
    """

    name: str = "runner"
    overload: OverloadCheck | None = OverloadCheck()

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

    def _project_ini(self, name: str, text: str) -> str:
        """Stage a repository's pristine pytest configuration (content-addressed, outside
        every job's copy) and return its path, passed to pytest with ``-c``."""
        digest = hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()[:24]
        directory = os.path.join(self._stage, "projects", digest)
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            write_atomic(path, text)
            for d in (directory, os.path.dirname(directory)):
                os.chmod(d, 0o755)
        return path

    def _payload(self, job: Job) -> dict[str, Any]:
        for module in _trusted_modules(job):
            confinement.stage_module(self._stage, module)
        payload = job.model_dump(mode="json")
        project = job.project
        # Where the job's copy will be (the child never learns the host path of the
        # directory it was made from: every run looks the same from inside).
        payload["workdir"] = isolation.JOB_DIR
        payload["_ini"] = self._ini
        payload["_read"] = self._read
        if project is not None:
            if project.config_name is not None:
                payload["_ini"] = self._project_ini(project.config_name, project.config_text)
            if project.site_dirs:
                confinement.add_readonly_dirs(list(project.site_dirs))
                payload["_read"] = sorted({*self._read, *project.site_dirs})
        payload["_max_procs"] = self.max_procs
        payload["_confined"] = self.confined
        payload["_jobroot"] = None if self.confined else self._jobroot
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
        check = self.overload
        load_before = check.load() if check is not None else 0.0
        first = self._attempt(job)
        if check is not None and check.starved(first, load_before):
            # Starved of CPU on an overloaded host: retry once; the retry's verdict is
            # final (one retry per job, whatever its reason).
            logger.warning("time-out on an overloaded host, retrying the job once")
            second = self._attempt(job)
            if fault_cause(second) in JOB_REACHABLE_FAULTS:
                return first  # a fault the code may cause cannot launder its time-out
            if second.status is RunStatus.TIMEOUT and second.fault is None:
                return second.model_copy(
                    update={"detail": f"{second.detail} (also on retry: the code's)"}
                )
            return second
        if first.fault is None:
            return first
        # A machine fault: retry once (a dead zygote is replaced, a transient ENOSPC or
        # EAGAIN may have passed). A clean retry is the job's true verdict.
        logger.warning("machine fault, retrying the job once: %s", first.fault)
        second = self._attempt(job)
        if second.fault is None:
            return second
        if fault_cause(first) == fault_cause(second) in JOB_REACHABLE_FAULTS:
            # Reproduced on a fresh zygote by a cause the job's code can reach (e.g. it
            # kills its own zygote): the code's doing, scored as its crash, so a policy
            # cannot dress its failures up as the machine's to escape a penalty.
            return second.model_copy(
                update={
                    "status": RunStatus.CRASHED,
                    "fault": None,
                    "detail": f"{second.detail} (reproduced on retry: the code's fault)",
                }
            )
        return second

    def _attempt(self, job: Job) -> Result:
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


def feed(stream: Any, data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stream.write(data)
        stream.close()
