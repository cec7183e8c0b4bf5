"""Warm test code: pytest's assertion-rewritten code of a project's test modules,
compiled once by the trusted parent instead of once per run.

Every pytest run parses, rewrites and compiles each test module it imports (the child
writes no bytecode: ``sys.dont_write_bytecode``, a fresh ``pycache_prefix``), which for
a real project's suite is a large part of a run (sqlparse: ~1.4 s of CPU for its test
files). The parent (:mod:`forgegym.sandbox.runners.warm`) compiles the test files of a
project exactly as :func:`_pytest.assertion.rewrite._rewrite_test` would at the path the
child sees them (``/job/...``, the same for every confined run) and writes the code
objects, keyed by that path and the SHA-256 of the source bytes, to a file in the
runner's stage. A zygote loads those files once at start (:func:`install`, before any
job and before the runtime policy exists) and replaces ``_rewrite_test`` with a lookup:
a module whose path and bytes match an entry gets the parent's code object (the very
object ``compile`` would return for those bytes at that path), anything else goes to
pytest's own function. The result is therefore identical by construction; only the
work moves.

What a run can see of it: the code of test files (never package sources, references or
hidden tests: the parent registers only tests the agent is shown), in the zygote's
memory and in the stage. A run that tampers with the table changes only its own run,
as it could already patch pytest in its own process.

Standard library (and pytest, imported lazily) only: this file is staged into the
sandbox.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
from pathlib import Path
from typing import Any

__all__ = ["HEADER", "install", "lookup", "table_size"]

#: File header: format name and the interpreter's bytecode magic (a file written by
#: another Python is ignored).
HEADER = b"forgegym-warmcode-1\0" + importlib.util.MAGIC_NUMBER

_CODE: dict[tuple[str, str], Any] = {}


def lookup(path: str, source: bytes) -> Any:
    """The cached code object of ``source`` at ``path``, or None."""
    return _CODE.get((path, hashlib.sha256(source).hexdigest()))


def table_size() -> int:
    """Entries loaded (0: nothing installed)."""
    return len(_CODE)


def _load(path: str) -> None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return
    if not data.startswith(HEADER):
        return
    try:
        entries = marshal.loads(data[len(HEADER) :])
    except (EOFError, ValueError, TypeError):
        return
    if not isinstance(entries, dict):
        return
    for key, code in entries.items():
        if (
            isinstance(key, tuple)
            and len(key) == 2
            and all(isinstance(k, str) for k in key)
            and type(code).__name__ == "code"
        ):
            _CODE[key] = code


def install(paths: list[str]) -> None:
    """Zygote start: load the code files ``paths`` and route pytest's assertion
    rewriting through them (no-op when none loads)."""
    for path in paths:
        _load(path)
    if not _CODE:
        return
    import _pytest.assertion.rewrite as rewrite

    original = rewrite._rewrite_test

    def _rewrite_test(fn: Path, config: Any) -> tuple[bytes, Any]:
        # The parent compiled with the rewriter's only setting at its default.
        if config is None or not config.getini("enable_assertion_pass_hook"):
            source = fn.read_bytes()
            code = lookup(str(fn), source)
            if code is not None:
                return importlib.util.source_hash(source), code
        return original(fn, config)  # type: ignore[no-any-return]

    _rewrite_test.__wrapped__ = original  # type: ignore[attr-defined]
    rewrite._rewrite_test = _rewrite_test
