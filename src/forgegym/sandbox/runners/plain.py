"""The plain baseline runner: a fresh ``python`` interpreter per job (what benchmarks
compare against, and the fallback where fork is unavailable)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time

from forgegym.sandbox import isolation
from forgegym.sandbox.jobs import (
    Job,
    Result,
)
from forgegym.sandbox.runners.base import (
    IDLE_TREE,
    Control,
    Runner,
    Streams,
    decide,
    describe_status,
    drive,
    feed,
    in_cgroup,
    interpreter,
    snapshot,
)

__all__ = ["SubprocessRunner"]


class _ProcControl(Control):
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
            self.detail = f"supervisor ended without worker status ({describe_status(status)})"
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
        data["_files"] = snapshot(job.workdir)
        payload = json.dumps(data).encode()
        report_r, report_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        argv, env = interpreter(
            getattr(job, "python_hash_seed", None),
            self._stage,
            self.confined,
            ["subprocess", str(report_w), str(ctl_w)],
        )
        cgroup = isolation.cgroup_create(self.max_procs + IDLE_TREE) if self.confined else None
        argv = in_cgroup(argv, cgroup)
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
        feeder = threading.Thread(target=feed, args=(proc.stdin, payload), daemon=True)
        feeder.start()
        control = _ProcControl(proc, ctl_r, self.confined)
        control.cgroup = cgroup
        streams = Streams(report_r, out_r, err_r, job.output_limit_bytes)
        try:
            timed_out, exceeded = drive(control, streams, job.timeout_s)
        finally:
            control.cleanup()
        feeder.join(timeout=1.0)
        return decide(job, control, streams, timed_out, exceeded, time.monotonic() - start)
