"""Files that change how tests run, and sources the interpreter would read differently
(``test_tampering_file``, ``source_encoding``)."""

from __future__ import annotations

import io
import posixpath
import tokenize
from collections.abc import Iterable

from forgegym.rewards.antihack.index import HackFinding

__all__ = ["TAMPERING_FILENAMES", "scan_added_files", "scan_source_encoding"]

TAMPERING_FILENAMES: frozenset[str] = frozenset(
    {"conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "tox.ini",
     "setup.cfg", "pyproject.toml", "sitecustomize.py", "usercustomize.py", "pytest.py",
     "_pytest.py", "pluggy.py", "unittest.py", "builtins.py", "faulthandler.py"}
)  # fmt: skip
"""File names that change how tests are collected or run, or shadow the framework."""
_TAMPERING_DIRS = frozenset({"_pytest", "pytest", "pluggy", "unittest", ".pytest_cache"})


def scan_added_files(paths: Iterable[str]) -> list[HackFinding]:
    """``test_tampering_file`` findings for added files that configure or hijack the
    test run: ``conftest.py``, ``pytest.ini``/``tox.ini``/``setup.cfg``/``pyproject.toml``,
    ``sitecustomize.py``, ``*.pth``, and modules shadowing ``pytest``/``unittest``/...."""
    findings = []
    for path in paths:
        norm = posixpath.normpath(path.replace("\\", "/"))
        parts = norm.split("/")
        name = parts[-1]
        reason = None
        if name in TAMPERING_FILENAMES:
            reason = f"{name} changes how tests are collected or run"
        elif name.endswith(".pth"):
            reason = ".pth files run code at interpreter start-up"
        elif any(part in _TAMPERING_DIRS for part in parts[:-1]):
            reason = "shadows a test-framework package"
        if reason:
            findings.append(
                HackFinding(kind="test_tampering_file", path=path, line=0, detail=reason)
            )
    return findings


_UTF8_NAMES = frozenset({"utf-8", "utf-8-sig"})


def scan_source_encoding(text: str, path: str) -> HackFinding | None:
    """``source_encoding`` when the interpreter would not decode ``text`` (written as
    UTF-8, as every workspace file is) into the same characters the scans parse: a
    PEP 263 coding cookie naming another codec (``utf-7`` turns ``+AAo-`` into a newline,
    so a "comment" runs as code), a byte-order mark, or an invalid cookie. Scans and the
    interpreter must read exactly the same source."""
    if text.startswith("\ufeff"):
        return HackFinding(kind="source_encoding", path=path, line=1, detail="byte-order mark")
    head = text.encode("utf-8", "surrogatepass")[:4096]
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
    except SyntaxError as exc:
        return HackFinding(kind="source_encoding", path=path, line=1, detail=str(exc)[:200])
    if encoding not in _UTF8_NAMES:
        return HackFinding(
            kind="source_encoding",
            path=path,
            line=1,
            detail=f"coding cookie {encoding!r}: the interpreter would decode other text",
        )
    return None
