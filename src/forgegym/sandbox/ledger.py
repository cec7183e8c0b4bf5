"""The verdict state of a sandboxed pytest run: the messages the report plugin sends and
the ledger, owned by the signer, that composes each test's record from them.

The ledger's only reference lives in the signer generator's suspended frame (see
``forgegym.sandbox.harness._signer``), which code under test cannot reach; the plugin
holds no verdict state at all (docs/design/004, decision D1). Standard library only.
"""

from __future__ import annotations

import os
from typing import Any

__all__: list[str] = []


def _safe_str(value: object, limit: int = 2000) -> str:
    """``str()`` of an agent-controlled object without trusting it."""
    try:
        text = str(value)
        if type(text) is not str:
            return "<unprintable>"
    except BaseException:  # noqa: BLE001 - hostile __str__
        return "<unprintable>"
    return text[:limit]


class _Collected:
    """Message to the ledger: the items collected (before ``order`` reorders them)."""

    __slots__ = ("items", "session", "ran")

    def __init__(self, items: list[Any], session: Any, ran: int) -> None:
        self.items = items
        self.session = session
        self.ran = ran


class _Phase:
    """Message to the ledger: one phase report of a test, as plain facts."""

    __slots__ = ("nodeid", "when", "failed", "skipped", "wasxfail", "duration", "skip_message")

    def __init__(self, report: Any) -> None:
        self.nodeid = str(report.nodeid)
        self.when = str(report.when)
        self.failed = bool(report.failed)
        self.skipped = bool(report.skipped)
        self.wasxfail = hasattr(report, "wasxfail")
        self.duration = float(getattr(report, "duration", 0.0) or 0.0)
        longrepr = getattr(report, "longrepr", None)
        self.skip_message = (
            _safe_str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else None
        )


class _Error:
    """Message to the ledger: the first exception of a test (type, message, frames)."""

    __slots__ = ("nodeid", "error")

    def __init__(self, nodeid: str, error: tuple[str, str, list[dict[str, Any]]]) -> None:
        self.nodeid = nodeid
        self.error = error


class _CollectError:
    """Message to the ledger: a collector failed."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Finish:
    """Message to the ledger: a test finished; the ledger composes and signs its record."""

    __slots__ = ("nodeid", "watch")

    def __init__(self, nodeid: str, watch: Any) -> None:
        self.nodeid = nodeid
        self.watch = watch


class _End:
    """Message to the ledger: the session finished; the ledger signs the sentinel."""

    __slots__ = ("exitstatus",)

    def __init__(self, exitstatus: int) -> None:
        self.exitstatus = exitstatus


def _function_of(obj: Any) -> Any:
    """The plain function behind a collected test object (a bound method's ``__func__``)."""
    return getattr(obj, "__func__", obj)


class _Provenance:
    """Message to the ledger, sent by the worker right after it installs the runtime
    policy (before any workspace code exists, so before a conftest imports the project):
    ``trusted(filename) -> bool``, the pristine manifest and the workdir."""

    __slots__ = ("trusted", "manifest", "workdir")

    def __init__(self, trusted: Any, manifest: dict[str, str], workdir: str) -> None:
        self.trusted = trusted
        self.manifest = manifest
        self.workdir = workdir


class _Ledger:
    """The verdict state of a pytest run, owned by the signer generator: its only
    reference lives in the signer's suspended frame, which code under test cannot reach.
    (It lived on the report plugin, which anyone holding pytest's config reaches: issue 36
    forged every verdict by replacing its ``_phases`` and ``_errors``.)

    It composes each test's record from the phase facts the plugin sends, and refuses a
    record for an item whose test function is not the pristine test (the file was
    rewritten before import, a module planted in ``sys.modules``, an import hook) or whose
    instance or session grew attributes that shadow the class's methods
    (``item.runtest = ...``)."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, _Phase]] = {}
        self.errors: dict[str, tuple[str, str, list[dict[str, Any]]]] = {}
        self.collected: list[str] = []
        self.ran = 0
        self.collection_errors: list[str] = []
        self.items: dict[str, tuple[Any, Any, frozenset[str]]] = {}
        self.untrusted: dict[str, str] = {}
        self.watched: list[tuple[Any, frozenset[str]]] = []
        self.provenance: Any = None

    def provenance_from(self, message: _Provenance) -> None:
        """The worker's provenance check (once: a later message changes nothing)."""
        if self.provenance is None:
            self.provenance = (message.trusted, dict(message.manifest), message.workdir)

    # ------------------------------------------------------------ collection
    def collect(self, message: _Collected) -> None:
        self.collected = [str(item.nodeid) for item in message.items]
        self.ran = message.ran
        for item in message.items:
            nodeid = str(item.nodeid)
            self.items[nodeid] = (item, _function_of(vars(item).get("_obj")), frozenset(vars(item)))
            why = self._not_pristine(item)
            if why is not None:
                self.untrusted[nodeid] = why
        for obj in (message.session, getattr(message.session, "config", None)):
            if obj is not None:
                self.watched.append((obj, frozenset(vars(obj))))

    def _not_pristine(self, item: Any) -> str | None:
        """Why ``item``'s test function is not trusted code, if the parent said its file
        is pristine (FlakyRepair's edited tests are not listed): the function, and every
        function a decorator wraps (``__wrapped__``), must come from trusted code (a
        pristine file, the standard library or an installed dependency: freezegun's
        wrapper is one). A test file rewritten before import, a module planted in
        ``sys.modules`` or an import hook all yield functions of untrusted code."""
        if self.provenance is None:
            return None
        trusted, manifest, workdir = self.provenance
        path = str(getattr(item, "path", "") or "")
        prefix = workdir.rstrip(os.sep) + os.sep
        if not path.startswith(prefix) or path[len(prefix) :] not in manifest:
            return None
        try:
            function = getattr(item, "obj", None)
            for _ in range(20):  # a decorator chain, bounded
                function = getattr(function, "__func__", function)
                code = getattr(function, "__code__", None)
                if code is not None and not trusted(code.co_filename):
                    return "the test function is not the pristine test file's code"
                wrapped = getattr(function, "__wrapped__", None)
                if wrapped is None or wrapped is function:
                    break
                function = wrapped
        except BaseException:  # noqa: BLE001 - a hostile descriptor
            return "the test function cannot be read"
        return None

    def _shadowed(self, nodeid: str) -> str | None:
        """Instance attributes added since collection that shadow a method of the class
        (``item.runtest = ...``, ``session.gethookproxy = ...``), or a swapped test object."""
        checks: list[tuple[Any, frozenset[str]]] = list(self.watched)
        entry = self.items.get(nodeid)
        if entry is not None:
            item, function, keys = entry
            now = vars(item).get("_obj")
            if function is not None and now is not None and _function_of(now) is not function:
                return "the test function was replaced"
            checks.append((item, keys))
        for target, keys in checks:
            cls = type(target)
            for key in vars(target):
                if key not in keys and callable(getattr(cls, key, None)):
                    return f"{cls.__name__}.{key} shadowed on the instance"
        return None

    # ------------------------------------------------------------ phases
    def phase(self, message: _Phase) -> None:
        phases = self.phases.setdefault(message.nodeid, {})
        earlier = phases.get(message.when)
        # pytest >= 9 reports each unittest ``subTest`` (and ``subtests`` fixture step)
        # before the test's own call report, which passes when only subtests failed: a
        # failed report of a phase must not be hidden by a later passing one.
        if earlier is not None and earlier.failed and not message.failed:
            return
        phases[message.when] = message

    def error(self, message: _Error) -> None:
        if message.nodeid not in self.errors:
            self.errors[message.nodeid] = message.error

    def finish(self, message: _Finish) -> dict[str, Any]:
        nodeid = message.nodeid
        phases = self.phases.pop(nodeid, {})
        error = self.errors.pop(nodeid, None)
        setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
        outcome = "error"
        if setup is not None and setup.failed:
            outcome = "error"
        elif setup is not None and setup.skipped:
            outcome = "xfailed" if setup.wasxfail else "skipped"
        elif call is not None:
            if call.failed:
                outcome = "failed"
            elif call.skipped:
                outcome = "xfailed" if call.wasxfail else "skipped"
            else:
                outcome = "xpassed" if call.wasxfail else "passed"
        if teardown is not None and teardown.failed and outcome == "passed":
            outcome = "error"
        refusal = self.untrusted.get(nodeid) or self._shadowed(nodeid)
        if refusal is not None:
            outcome, error = "error", ("UntrustedTest", refusal, [])
        record: dict[str, Any] = {
            "t": "test",
            "nodeid": nodeid,
            "outcome": outcome,
            "duration_s": float(sum(p.duration for p in phases.values())),
        }
        if outcome in ("failed", "error", "skipped", "xfailed") and error is not None:
            record["error_type"], record["message"], record["frames"] = error
        elif outcome in ("skipped", "xfailed"):
            rep = setup if setup is not None and setup.skipped else call
            if rep is not None and rep.skip_message is not None:
                record["message"] = rep.skip_message
        if message.watch is not None:
            record["watch"] = message.watch
        return record

    def end(self, message: _End) -> dict[str, Any]:
        return {
            "t": "end",
            "collected": self.collected,
            "ran": self.ran,
            "exitstatus": message.exitstatus,
            "collection_errors": self.collection_errors,
        }
