"""Warm projects, parent side: the test code the fork-server's zygotes start with.

A project registers the test files its agents are shown (:func:`register_tests`; the
real bank does it once per project, :mod:`forgegym.envs.bugfix.real`). The parent
compiles them as pytest's assertion rewriter would at the path a confined run sees them
(:data:`~forgegym.sandbox.isolation.JOB_DIR`), once per content, and caches the result
on disk (:func:`code_file`: reused by every process and every later session).
:class:`~forgegym.sandbox.runners.forkserver.ForkServerRunner` writes the registered
files into its stage and starts its zygotes with them
(:mod:`forgegym.sandbox.warmcode`); a zygote started before the latest registration is
retired when it is next taken (:func:`generation`), as for new dependency directories.

Only test files go here, never package sources: a zygote serves every task of every
project, and a package module's pristine code is the reference fix of some task.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import marshal
import posixpath
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from forgegym.sandbox import isolation
from forgegym.sandbox.atomic import write_atomic
from forgegym.sandbox.warmcode import HEADER

__all__ = [
    "code_file",
    "compile_tests",
    "generation",
    "is_compiled",
    "register_tests",
    "registered",
]

_LOCK = threading.Lock()
#: content key -> the code file's bytes (header + marshalled table).
_REGISTERED: dict[str, bytes] = {}
_GENERATION = [0]
#: Test sources over this size are left to pytest (a generated data file, not a test).
MAX_SOURCE_BYTES = 2_000_000


def _key(files: Mapping[str, str]) -> str:
    # pytest.__version__ is _pytest's: read there, without importing pytest (~0.5 s of a
    # first reset, which only looks the key up)
    from _pytest import __version__ as pytest_version

    digest = hashlib.sha256(
        f"{HEADER!r}\0{sys.version}\0{pytest_version}\0{isolation.JOB_DIR}\0".encode()
    )
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    return digest.hexdigest()[:32]


def compile_tests(files: Mapping[str, str], job_dir: str = isolation.JOB_DIR) -> bytes:
    """The code file of ``files`` (relative path -> source of a test module or
    ``conftest.py``): each compiled as ``_pytest.assertion.rewrite._rewrite_test``
    compiles it at ``job_dir/path``, with the rewriter's settings at their defaults. A
    file that does not parse is left out (pytest reports it as it always does)."""
    from _pytest.assertion.rewrite import rewrite_asserts

    table: dict[tuple[str, str], object] = {}
    for rel, text in sorted(files.items()):
        source = text.encode("utf-8")
        if len(source) > MAX_SOURCE_BYTES or sys.flags.optimize:
            continue
        path = posixpath.join(job_dir, rel)
        try:
            tree = ast.parse(source, filename=path)
            rewrite_asserts(tree, source, path, None)
            code = compile(tree, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
            # SystemError: CPython 3.11's AST builder state is shared between threads
            # (python/cpython#106905); the file is left to pytest in the child.
            continue
        table[(path, hashlib.sha256(source).hexdigest())] = code
    return HEADER + marshal.dumps(table)


def code_file(files: Mapping[str, str], cache_dir: Path | None = None) -> tuple[str, bytes]:
    """``(key, code file bytes)`` of ``files``, read from ``cache_dir`` when an earlier
    process compiled the same files with the same interpreter and pytest (written there
    atomically otherwise; ``None``: compiled, not cached)."""
    key = _key(files)
    if cache_dir is not None:
        path = cache_dir / f"{key}.bin"
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        if data.startswith(HEADER):
            return key, data
    data = compile_tests(files)
    if cache_dir is not None:
        _write_code_file(cache_dir, key, data)
    return key, data


def _write_code_file(cache_dir: Path, key: str, data: bytes) -> None:
    """Write a code file into ``cache_dir`` atomically (a cache: failures are ignored)."""
    with contextlib.suppress(OSError):
        write_atomic(cache_dir / f"{key}.bin", data)


def is_compiled(files: Mapping[str, str], cache_dir: Path) -> bool:
    """Whether ``files`` are registered here or their code file is in ``cache_dir``."""
    key = _key(files)
    with _LOCK:
        if key in _REGISTERED:
            return True
    return (cache_dir / f"{key}.bin").is_file()


def register_tests(files: Mapping[str, str], cache_dir: Path | None = None) -> str:
    """Make ``files`` (test modules and conftests the agent is shown) warm in every
    zygote started from now on; returns their key. Registering the same files again is
    free."""
    key = _key(files)
    with _LOCK:
        known = _REGISTERED.get(key)
    if known is not None:
        # Registered in this process already: still written where later processes read
        # (another cache folder, e.g. a second bank's projects).
        if cache_dir is not None and not (cache_dir / f"{key}.bin").is_file():
            _write_code_file(cache_dir, key, known)
        return key
    key, data = code_file(files, cache_dir)
    with _LOCK:
        if key not in _REGISTERED:
            _REGISTERED[key] = data
            _GENERATION[0] += 1
    return key


def registered() -> dict[str, bytes]:
    """Key -> code file bytes, of everything registered in this process."""
    with _LOCK:
        return dict(_REGISTERED)


def generation() -> int:
    """How many registrations this process has seen (zygotes of an older one lack some)."""
    return _GENERATION[0]
