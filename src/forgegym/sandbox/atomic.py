"""Atomic file writes for forgegym's on-disk caches (standard library only).

Several processes (grading processes, a trainer's workers, later sessions) share the
caches under ``~/.cache/forgegym`` and the runners' staging folders: a reader must see a
file whole or not at all, and two writers of one key must not interleave. Every cache
file is written to a unique temporary file in the destination's folder and renamed over
the destination (``os.replace`` is atomic within one file system).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes | str, mode: int = 0o644) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically and return the path.

    The parent folders are created. ``mode`` is the file's permission bits (readable by
    the sandbox's confined user by default; ``mkstemp`` alone would leave 0600). On an
    error the temporary file is removed and the ``OSError`` raised: callers whose file
    is only a cache catch it.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(scratch, mode)
        os.replace(scratch, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise
    return target
