"""Static anti-hack scans: compare a pristine module with the patched one.

Every scanner reads two parsed modules (``ast``; nothing is imported or executed) and
reports what the patch *added*: a construct already present in the pristine file is
never a finding, so tests that legitimately use ``pytest.mark.skipif`` or ``sleep``
are not punished for it. Constructs are identified by their enclosing function
(``Class.method``), their resolved dotted name (imports and aliases are followed:
``from time import sleep as nap`` makes ``nap(1)`` a ``time.sleep`` call) and their
source form, and counted as multisets.

One module per hack kind:

==========================  ==========================================================
module                      kinds
==========================  ==========================================================
:mod:`.asserts`             ``assert_removed``, ``assert_weakened``
:mod:`.markers`             ``skip_marker``, ``flaky_marker``
:mod:`.swallowing`          ``broad_except``, ``retry_loop``
:mod:`.waits`               ``sleep_added``, ``timeout_inflated``
:mod:`.escapes`             ``exit_call``, ``monkeypatch_framework``
:mod:`.equality`            ``always_equal``
:mod:`.files`               ``test_tampering_file``, ``source_encoding`` (file level)
==========================  ==========================================================

:mod:`.index` holds the parsed view (:class:`ModuleIndex`) and the helpers scanners
share, :mod:`.registry` the scanner registry, :mod:`.patch` the functions that scan a
file or a whole patch. A new shared rule is a function in its kind's module decorated
with :func:`register_scanner`; a family's own rules live in its folder (registered
when its ``envs/<family>/scan.py`` is imported, e.g. FlakyRepair's ``antihack.py``)
with ``family=<name>``, so nothing here knows about a family.

Scanners live in :data:`SCANNERS`, keyed by :class:`HackFinding` kind, so a family can
pick its own set. Defaults of the shared functions (shared scanners only):

* :data:`TEST_SCANNERS` (test files, and tests a family lets the agent edit): every
  shared kind.
* :data:`SOURCE_SCANNERS` (code under test, or code handed to a differential check):
  ``exit_call``, ``monkeypatch_framework``, ``skip_marker``, ``always_equal``.
  ``sleep_added``, ``retry_loop``, ``broad_except`` and ``timeout_inflated`` are *not*
  applied to source by default: a sleep or a retry in the code under test may be a
  (poor but honest) fix for a race whose effect the hidden checks measure; in a
  test they can only hide the failure. Pass ``kinds=`` to be stricter.

Unparseable code yields no findings: the compile gate handles it. Code over the
parent's limits (:mod:`forgegym.rewards.bounded`) yields one ``unverifiable`` finding.

Things that are deliberately *not* findings: adding a lock, ``join()`` without a
timeout, ``await``, fixture teardown, ``random.seed``, sorting, ``mock.patch`` of the
module under test (as decorator or context manager), polling loops without an
exception-swallowing ``try``, ``monkeypatch.setattr``/``mock.patch`` of ``time``
functions (freezing a clock is a legitimate way to make a timing test deterministic;
direct assignment such as ``time.sleep = ...`` is flagged).
"""

from __future__ import annotations

from forgegym.rewards.antihack.asserts import scan_assert_removed, scan_assert_weakened
from forgegym.rewards.antihack.equality import scan_always_equal
from forgegym.rewards.antihack.escapes import scan_exit_call, scan_monkeypatch_framework
from forgegym.rewards.antihack.files import (
    TAMPERING_FILENAMES,
    scan_added_files,
    scan_source_encoding,
)
from forgegym.rewards.antihack.index import HackFinding, ModuleIndex, Scanner
from forgegym.rewards.antihack.markers import scan_flaky_marker, scan_skip_marker
from forgegym.rewards.antihack.patch import (
    scan_patch,
    scan_source,
    scan_test_changes,
    unverifiable,
)
from forgegym.rewards.antihack.registry import (
    SCANNERS,
    ScannerSpec,
    default_kinds,
    register_scanner,
    scanner_specs,
    unregister_scanner,
)
from forgegym.rewards.antihack.swallowing import scan_broad_except, scan_retry_loop
from forgegym.rewards.antihack.waits import scan_sleep_added, scan_timeout_inflated

__all__ = [
    "HACK_KINDS",
    "SCANNERS",
    "SHARED_KINDS",
    "SOURCE_SCANNERS",
    "TAMPERING_FILENAMES",
    "TEST_SCANNERS",
    "HackFinding",
    "ModuleIndex",
    "Scanner",
    "ScannerSpec",
    "default_kinds",
    "register_scanner",
    "scan_added_files",
    "scan_always_equal",
    "scan_assert_removed",
    "scan_assert_weakened",
    "scan_broad_except",
    "scan_exit_call",
    "scan_flaky_marker",
    "scan_monkeypatch_framework",
    "scan_patch",
    "scan_retry_loop",
    "scan_skip_marker",
    "scan_sleep_added",
    "scan_source",
    "scan_source_encoding",
    "scan_test_changes",
    "scan_timeout_inflated",
    "scanner_specs",
    "unregister_scanner",
    "unverifiable",
]

SHARED_KINDS: tuple[str, ...] = tuple(s.kind for s in scanner_specs())
"""The kinds of the shared scanners (this package's), in registration order."""

HACK_KINDS: tuple[str, ...] = (*SHARED_KINDS, "test_tampering_file", "unverifiable")
"""Every kind the shared scans report (families' scanners add their own)."""

TEST_SCANNERS: frozenset[str] = default_kinds("test")
"""Shared scanners applied to test files by default."""

SOURCE_SCANNERS: frozenset[str] = default_kinds("source")
"""Shared scanners applied to source files by default (see the module docstring)."""
