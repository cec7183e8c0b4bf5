"""The shared registry of module scanners, keyed by the finding kind each reports.

A module scanner is ``(pristine: ModuleIndex, patched: ModuleIndex, path) ->
[HackFinding]``: a *rule* that a family's one scanner
(``envs/<family>/scan.py:scan_submission``, ``(task, files) -> [HackFinding]``) runs
through :func:`~forgegym.rewards.antihack.scan_patch`. The shared rules (one module
per hack kind in this package) and a family's own rules (registered by a module its
``scan.py`` imports, e.g. FlakyRepair's ``antihack.py``) register the same way::

    @register_scanner("wait_inflated", tests=True, source=False, family="myfamily")
    def scan_wait_inflated(pristine, patched, path): ...

``tests`` / ``source`` say whether the scanner runs on test files / on the code under
test when a caller asks for the defaults. The defaults of the shared scanning
functions (:func:`default_kinds` with ``family=None``) are the shared scanners only;
a family's grader asks for ``default_kinds(role, family="myfamily")``, which adds its
own. Every registered scanner, shared or a family's, is held to the same bounds: the
adversarial-source corpus test runs each of them over hostile sources.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Literal

from forgegym.rewards.antihack.index import Scanner

__all__ = [
    "SCANNERS",
    "ScannerSpec",
    "default_kinds",
    "register_scanner",
    "scanner_specs",
    "select_kinds",
    "unregister_scanner",
]

Role = Literal["test", "source"]


@dataclass(frozen=True)
class ScannerSpec:
    """One registered scanner."""

    kind: str
    scan: Scanner
    #: Runs on test files by default.
    tests: bool
    #: Runs on the code under test by default.
    source: bool
    #: The family that registered it (``None``: a shared scanner).
    family: str | None


_LOCK = threading.RLock()
_SPECS: dict[str, ScannerSpec] = {}

SCANNERS: dict[str, Scanner] = {}
"""Every registered module scanner (shared and families'), keyed by the kind it reports.
Read it; register with :func:`register_scanner`."""


def register_scanner(
    kind: str, *, tests: bool = True, source: bool = False, family: str | None = None
) -> Callable[[Scanner], Scanner]:
    """Decorator: register a module scanner under the finding ``kind`` it reports.

    Raises ``ValueError`` when ``kind`` is not identifier-like or is already taken by
    another scanner (registering the same function again, as a module reload does, is
    allowed).
    """
    if not isinstance(kind, str) or not kind.isidentifier():
        raise ValueError(f"kind: scanner kinds are identifiers, got {kind!r}")
    if family is not None and (not isinstance(family, str) or not family.isidentifier()):
        raise ValueError(f"family: expected a family name, got {family!r}")

    def decorate(scan: Scanner) -> Scanner:
        spec = ScannerSpec(kind=kind, scan=scan, tests=tests, source=source, family=family)
        with _LOCK:
            old = _SPECS.get(kind)
            if old is not None and _name(old.scan) != _name(scan):
                raise ValueError(
                    f"kind: scanner {kind!r} is already registered by {_name(old.scan)}"
                )
            _SPECS[kind] = spec
            SCANNERS[kind] = scan
        return scan

    return decorate


def unregister_scanner(kind: str) -> None:
    """Remove a scanner (for tests and notebooks)."""
    with _LOCK:
        _SPECS.pop(kind, None)
        SCANNERS.pop(kind, None)


def scanner_specs(family: str | None = None, *, shared: bool = True) -> list[ScannerSpec]:
    """The registered scanners, in registration order: the shared ones (unless
    ``shared=False``) and those of ``family``."""
    with _LOCK:
        return [
            s
            for s in _SPECS.values()
            if (s.family is None and shared) or (family is not None and s.family == family)
        ]


def default_kinds(role: Role, family: str | None = None) -> frozenset[str]:
    """The kinds run by default on ``role`` files (``"test"`` or ``"source"``): the
    shared scanners' plus, with ``family``, that family's own."""
    if role not in ("test", "source"):
        raise ValueError(f"role: expected 'test' or 'source', got {role!r}")
    return frozenset(
        s.kind for s in scanner_specs(family) if (s.tests if role == "test" else s.source)
    )


def select_kinds(
    kinds: Collection[str] | None, default: Collection[str], argument: str
) -> list[str]:
    """``kinds`` (or ``default``) in registration order; ``ValueError`` naming
    ``argument`` for a kind no scanner reports."""
    chosen = default if kinds is None else kinds
    with _LOCK:
        unknown = sorted(set(chosen) - set(SCANNERS))
        if unknown:
            raise ValueError(
                f"{argument}: unknown scanner {unknown[0]!r}; known: {sorted(SCANNERS)}"
            )
        return [k for k in SCANNERS if k in chosen]


def _name(fn: Callable[..., object]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
