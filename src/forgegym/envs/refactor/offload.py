"""The Refactor parent's static analysis in a trusted worker process.

The structural checks of a refactoring (compile, integrity scans, the libcst public
API, structure) read only the submission's text, not its sandbox results, and cost
more CPU than anything else the parent does. In one grading interpreter they are
serial (Amdahl: they cap how many cores a batch can use) and they hold the GIL the
threads driving the sandbox pool need. On the optimised batch path
(:meth:`~forgegym.envs.refactor.grader.RefactorGrader.prepare`) they run here instead,
in long-lived worker processes, while the parent starts the
sandbox jobs of the submissions already analysed; the lint of a submission whose
gates passed (ruff runs) runs there too. A grading process has one worker per four
cores (:func:`worker_count`); a task's submissions always go to the same one.

The worker is trusted code (:func:`main` in a fresh interpreter, never the
sandbox, where model code runs and its answers would be forgeable); it runs the same
functions as the in-process path (:func:`~forgegym.envs.refactor.grader.analyse`), so
the results are identical; requests and answers are JSON (order-preserving, floats
round-trip exactly). A worker that cannot start, dies or does not answer in time makes
the grader compute in the parent, as it does on the reference path.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import queue
import struct
import subprocess
import sys
import threading
import zlib
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any

__all__ = ["StaticWorker", "main", "shared_worker", "worker_count"]

_HEADER = struct.Struct(">I")
#: The worker's entry point; the working directory (``sys.path[0]``) cannot shadow
#: forgegym.
_BOOT = "import sys; del sys.path[0]; from forgegym.envs.refactor.offload import main; main()"
#: Worker (re)starts one grading process attempts before computing in the parent only.
MAX_STARTS = 3


def _write(stream: IO[bytes], payload: Any) -> None:
    data = json.dumps(payload, ensure_ascii=True).encode("ascii")
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("stream closed")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("stream closed mid-frame")
    return json.loads(data)


class StaticWorker:
    """One worker process; :meth:`submit` returns a future of the answer (an analysis,
    or a lint credit; see :func:`main`)."""

    def __init__(self) -> None:
        import forgegym

        env = dict(os.environ)
        root = str(Path(forgegym.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._ids = itertools.count()
        self._pending: dict[int, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._outbox: queue.SimpleQueue[tuple[int, dict[str, Any]] | None] = queue.SimpleQueue()
        self.alive = True
        for target, name in ((self._send, "writer"), (self._receive, "reader")):
            threading.Thread(target=target, name=f"fg-refactor-static-{name}", daemon=True).start()

    def submit(self, request: dict[str, Any]) -> Future[dict[str, Any]]:
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            if not self.alive:
                future.set_exception(RuntimeError("the static-analysis worker is gone"))
                return future
            ident = next(self._ids)
            self._pending[ident] = future
        self._outbox.put((ident, request))
        return future

    def _send(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            while (item := self._outbox.get()) is not None:
                ident, request = item
                _write(stdin, {"id": ident, "request": request})
        except (OSError, ValueError):
            self._fail("the static-analysis worker stopped reading")

    def _receive(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            while True:
                answer = _read(stdout)
                with self._lock:
                    future = self._pending.pop(int(answer["id"]), None)
                if future is None:
                    continue
                if "error" in answer:
                    future.set_exception(RuntimeError(str(answer["error"])))
                else:
                    future.set_result(answer["result"])
        except (OSError, ValueError, EOFError, KeyError, TypeError):
            self._fail("the static-analysis worker exited")

    def _fail(self, why: str) -> None:
        with self._lock:
            self.alive = False
            pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(RuntimeError(why))

    def abandon(self) -> None:
        """Kill a worker that does not answer in time: every answer it owes fails now
        (the parent computes them) and the next :func:`shared_worker` starts another."""
        self._fail("the static-analysis worker did not answer in time")
        with contextlib.suppress(OSError):
            self.proc.kill()
        self._outbox.put(None)

    def close(self) -> None:
        """Stop the worker (it exits when its input closes)."""
        self._outbox.put(None)
        self._fail("the static-analysis worker was closed")
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


#: Most workers per grading process (one per four usable cores, at least one).
MAX_WORKERS = 4
_SHARED: dict[int, StaticWorker] = {}
_SHARED_LOCK = threading.Lock()
_starts = 0


def worker_count() -> int:
    """Workers per grading process: one per four usable cores (the parent's analysis
    of a submission costs about a sixth of its sandbox jobs), 1 to :data:`MAX_WORKERS`."""
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0)) // 4))


def shared_worker(key: str = "") -> StaticWorker | None:
    """This process's worker for ``key`` (a task id: one task's submissions go to one
    worker, whose caches then hold that task's pristine analysis), started on first use
    and restarted if it died (at most :data:`MAX_STARTS` starts per worker count);
    ``None`` when none can run."""
    global _starts
    slot = zlib.crc32(key.encode("utf-8", "surrogatepass")) % worker_count()
    with _SHARED_LOCK:
        worker = _SHARED.get(slot)
        if worker is not None and worker.alive and worker.proc.poll() is None:
            return worker
        if worker is not None:
            worker.close()
            del _SHARED[slot]
        if _starts >= MAX_STARTS * worker_count():
            return None
        _starts += 1
        try:
            _SHARED[slot] = StaticWorker()
        except OSError:
            return None
        return _SHARED[slot]


@atexit.register
def _close_shared() -> None:
    with _SHARED_LOCK:
        for worker in _SHARED.values():
            worker.close()
        _SHARED.clear()


def _answer(ident: Any, request: dict[str, Any]) -> dict[str, Any]:
    from forgegym.envs.refactor.static import analyse, lint_credit

    try:
        if "lint" in request:
            lint = request["lint"]
            return {"id": ident, "result": lint_credit(lint["starting"], lint["files"])}
        return {"id": ident, "result": analyse(request)}
    except Exception as exc:  # noqa: BLE001 - the parent then computes it itself
        return {"id": ident, "error": f"{type(exc).__name__}: {exc}"[:500]}


def main() -> None:
    """The worker's loop until its input closes: an analysis is answered at once, in
    order; a lint (``{"lint": {"starting", "files"}}``: ruff runs, mostly waiting) in
    one of a few threads, when done."""
    from concurrent.futures import ThreadPoolExecutor

    stdin = sys.stdin.buffer
    # Answers go to the original stdout; anything else printing goes to stderr.
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    lock = threading.Lock()

    def reply(ident: Any, request: dict[str, Any]) -> None:
        answer = _answer(ident, request)
        with lock:
            _write(stdout, answer)

    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="fg-static-lint") as linters:
        while True:
            try:
                message = _read(stdin)
            except EOFError:
                return
            if "lint" in message["request"]:
                linters.submit(reply, message["id"], message["request"])
            else:
                reply(message["id"], message["request"])


if __name__ == "__main__":
    main()
