"""The default runner: a pool of warm zygote processes (pytest and the harness already
imported, confined by bubblewrap) that each fork a fresh child per job."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from forgegym.sandbox import confinement, isolation
from forgegym.sandbox.atomic import write_atomic
from forgegym.sandbox.jobs import Job, Result, RunStatus
from forgegym.sandbox.protocol import recv_frame, send_frame
from forgegym.sandbox.runners import warm
from forgegym.sandbox.runners.base import (
    FAULT_ZYGOTE,
    IDLE_TREE,
    ZYGOTE_START_TIMEOUT_S,
    Control,
    Runner,
    Streams,
    decide,
    drive,
    feed,
    in_cgroup,
    interpreter,
    snapshot,
)
from forgegym.sandbox.runners.plain import SubprocessRunner

__all__ = ["ForkServerRunner", "get_default_runner"]


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
        warm: tuple[int, list[str]] = (0, []),
    ) -> None:
        self.hash_seed = hash_seed
        self.confined = confined
        # The warm test code it loaded (forgegym.sandbox.runners.warm's generation).
        self.warm_generation = warm[0]
        self.cgroup: str | None = None
        # The read-only directories bound into it (see confinement.add_readonly_dirs).
        self.generation = confinement.readonly_generation()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        argv, env = interpreter(
            hash_seed,
            stage,
            confined,
            ["zygote", str(child.fileno()), str(max_procs), str(int(confined))],
            warm[1],
        )
        if confined:
            # The zygote cannot see /sys: the parent puts its whole tree in a pids cgroup.
            self.cgroup = isolation.cgroup_create(max_procs + IDLE_TREE + 2)
            argv = in_cgroup(argv, self.cgroup)
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
        return max(0, len(isolation.cgroup_pids(self.cgroup)) - IDLE_TREE)

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


class _ZygoteControl(Control):
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
        warm_code: bool = True,
    ) -> None:
        super().__init__(workers, max_procs, confine=confine, strict=strict)
        #: Start zygotes with the registered warm test code (:mod:`.warm`); False: every
        #: run rewrites its test modules itself (the unoptimised path, for comparisons).
        self.warm_code = bool(warm_code)
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
        """Start all ``workers`` zygotes for ``hash_seed`` now (in parallel); idle ones
        started before the latest warm test code (:mod:`.warm`) are replaced."""
        self._check_fork()
        with self._cond:
            stale = [
                z
                for zs in self._idle.values()
                for z in zs
                if self.warm_code and z.warm_generation < warm.generation()
            ]
            for zygotes in self._idle.values():
                zygotes[:] = [z for z in zygotes if z not in stale]
            self._total -= len(stale)
        for zygote in stale:
            zygote.close()
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
            hash_seed,
            self._dir,
            self.max_procs,
            stage=self._stage,
            confined=self.confined,
            warm=self._warm_files(),
        )

    def _warm_files(self) -> tuple[int, list[str]]:
        """The generation and stage paths of the registered warm test code
        (:mod:`.warm`): only confined zygotes use it (every confined run sees its files
        at the same path, the one the code was compiled for)."""
        current = warm.generation()
        if not self.confined or not self.warm_code:
            return current, []
        directory = os.path.join(self._stage, "warm")
        paths = []
        for key, data in warm.registered().items():
            path = os.path.join(directory, f"{key}.bin")
            if not os.path.exists(path):
                os.makedirs(directory, mode=0o755, exist_ok=True)
                write_atomic(path, data)
            paths.append(path)
        return current, paths

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
        project = job.project
        needed = 0
        if project is not None and project.site_dirs and self.confined:
            needed = confinement.add_readonly_dirs(list(project.site_dirs))
        zygote = self._acquire(seed)
        while zygote is not None and (
            zygote.generation < needed
            or (self.warm_code and zygote.warm_generation < warm.generation())
        ):
            # Started before the job's dependency directories were bound, or before the
            # latest warm test code was registered: retire it.
            self._release(zygote, broken=True)
            zygote = self._acquire(seed)
        if zygote is None:
            if self._fallback is None:
                self._fallback = SubprocessRunner(
                    self.workers, self.max_procs, confine=self.confined
                )
                # This runner's run() already retries a starved time-out once.
                self._fallback.overload = None
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
        files = json.dumps(snapshot(job.workdir)).encode()
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
        feeder = threading.Thread(target=feed, args=(os.fdopen(files_w, "wb"), files), daemon=True)
        feeder.start()
        control = _ZygoteControl(zygote, run_id)
        streams = Streams(report_r, out_r, err_r, job.output_limit_bytes)
        timed_out, exceeded = drive(control, streams, job.timeout_s)
        feeder.join(timeout=1.0)
        left = zygote.leftovers()
        if left:
            control.broken = True  # retire it: its cgroup removal kills what is left
            control.residue = f"{left} process(es) outlived the run"
        result = decide(job, control, streams, timed_out, exceeded, time.monotonic() - start)
        if (
            result.status is RunStatus.CRASHED
            and control.detail.startswith("zygote died")
            and not timed_out
            and not exceeded
        ):
            # The zygote went away under the run (killed from outside, OOM-killed, ...):
            # a machine fault until a retry on a fresh zygote reproduces it
            # (Runner.run). Never reuse it.
            result = result.model_copy(update={"fault": f"{FAULT_ZYGOTE}: {control.detail}"})
            return result, True
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
