"""How the parent watches one child tree: :class:`Control` (observe and stop it) and
:class:`Streams` (its report, stdout and stderr, read with byte caps).

Apart from :mod:`~forgegym.sandbox.runners.base` so that the verdict
(:mod:`~forgegym.sandbox.runners.verdict`), which reads both, and the runner base, which
drives both and imports the verdict, need no import circle. ``base`` re-exports them.
"""

from __future__ import annotations

import contextlib
import os
from abc import ABC, abstractmethod

__all__ = ["REPORT_LIMIT_BYTES", "TAIL_BYTES", "Control", "Streams"]

TAIL_BYTES = 16_384


REPORT_LIMIT_BYTES = 32 * 1024 * 1024


class Control(ABC):
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


class Streams:
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
