"""Scanning a patch: every changed file through the registered scanners.

:func:`scan_patch` walks a ``{path: text}`` patch; :func:`scan_test_changes` and
:func:`scan_source` scan one file. Each parses a file once and runs the selected
scanners of :mod:`~forgegym.rewards.antihack.registry` over it; code over the parent's
limits is one :func:`unverifiable` finding.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping

from forgegym.rewards import bounded
from forgegym.rewards.antihack.files import (
    TAMPERING_FILENAMES,
    scan_added_files,
    scan_source_encoding,
)
from forgegym.rewards.antihack.index import HackFinding, ModuleIndex
from forgegym.rewards.antihack.registry import SCANNERS, default_kinds, select_kinds

__all__ = ["scan_patch", "scan_source", "scan_test_changes", "unverifiable"]


def unverifiable(path: str, reason: str) -> HackFinding:
    """The finding of a source the parent cannot verify (over a limit): gates like a hack."""
    return HackFinding(kind="unverifiable", path=path, line=0, detail=f"cannot verify: {reason}")


def _run(pristine: str | None, patched: str, path: str, kinds: list[str]) -> list[HackFinding]:
    try:
        before = ModuleIndex.parse(pristine)
        after = ModuleIndex.parse(patched)
        if before is None or after is None:
            return []
        findings = [f for kind in kinds for f in SCANNERS[kind](before, after, path)]
    except bounded.Unverifiable as exc:
        return [unverifiable(path, str(exc))]
    except (RecursionError, MemoryError) as exc:  # defence in depth: limits should prevent it
        return [unverifiable(path, type(exc).__name__)]
    return sorted(findings, key=lambda f: (f.path, f.line, f.kind))


def scan_test_changes(
    pristine: str, patched: str, path: str, *, kinds: Collection[str] | None = None
) -> list[HackFinding]:
    """Findings in a patched test module relative to its pristine version.

    Args:
        pristine: the original test source.
        patched: the agent's version.
        path: reported in findings.
        kinds: scanner names (keys of :data:`SCANNERS`); default the shared test scanners.
    """
    return _run(pristine, patched, path, select_kinds(kinds, default_kinds("test"), "kinds"))


def scan_source(
    patched: str,
    path: str,
    pristine: str | None = None,
    *,
    kinds: Collection[str] | None = None,
) -> list[HackFinding]:
    """Findings in patched (or candidate) source code; without ``pristine`` everything
    suspicious counts as added. ``kinds`` defaults to the shared source scanners."""
    return _run(pristine, patched, path, select_kinds(kinds, default_kinds("source"), "kinds"))


def scan_patch(
    pristine_files: Mapping[str, str],
    patched_files: Mapping[str, str],
    test_paths: Collection[str],
    *,
    test_kinds: Collection[str] | None = None,
    source_kinds: Collection[str] | None = None,
) -> list[HackFinding]:
    """Scan a whole patch: ``{path: text}`` before and after.

    * added files → :func:`scan_added_files`; added ``.py`` files are also scanned as
      tests (if in ``test_paths``) or source;
    * a deleted test file → ``assert_removed``;
    * a changed test file → :func:`scan_test_changes`; a changed ``.py`` source file →
      :func:`scan_source` against its pristine; a changed config file whose name is in
      :data:`TAMPERING_FILENAMES` and is not a test path → ``test_tampering_file``.
    """
    test_set = set(test_paths)
    t_kinds = select_kinds(test_kinds, default_kinds("test"), "test_kinds")
    s_kinds = select_kinds(source_kinds, default_kinds("source"), "source_kinds")
    findings: list[HackFinding] = []
    for path in sorted(set(pristine_files) | set(patched_files)):
        old, new = pristine_files.get(path), patched_files.get(path)
        if old == new:
            continue
        if new is None:
            if path in test_set:
                findings.append(
                    HackFinding(
                        kind="assert_removed", path=path, line=0, detail="test file deleted"
                    )
                )
            continue
        if old is None:
            findings.extend(scan_added_files([path]))
        elif path not in test_set and posixpath.basename(path) in TAMPERING_FILENAMES:
            findings.extend(
                HackFinding(kind=f.kind, path=f.path, line=f.line, detail="modified: " + f.detail)
                for f in scan_added_files([path])
            )
        if path.endswith(".py"):
            encoding = scan_source_encoding(new, path)
            if encoding is not None:
                findings.append(encoding)
                continue  # what we would scan is not what the interpreter would run
            if path in test_set:
                findings.extend(_run(old or "", new, path, t_kinds))
            else:
                findings.extend(_run(old, new, path, s_kinds))
    return findings
