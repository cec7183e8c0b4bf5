"""What runs inside the sandboxed child for the hidden differential checks.

Standard library only, imported by the harness before the workspace is on ``sys.path``
(a trusted ``forgegym.`` call target), so a workspace module cannot shadow it.

:func:`run_checks` runs *sequences* of calls; each sequence starts from a fresh import
of the workspace's modules (module-level state does not leak between sequences). Every
call's outcome is reduced to plain JSON values -- the returned value, the exception
type name, the warning categories it emitted -- and the trusted parent compares them
with the original module's outcomes, which never enter the child.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import signal
import sys
import warnings
from typing import Any

__all__ = ["STEP_CPU_S", "install_budget", "plain_value", "run_checks"]

_MAX_DEPTH = 20
#: CPU seconds one step may use; after ``_MAX_TIMEOUTS`` slow steps the rest are skipped.
STEP_CPU_S = 0.25
_MAX_TIMEOUTS = 3


class StepTimeout(BaseException):
    """A step used more than its CPU budget (BaseException: ``except Exception`` in the
    code under test cannot swallow it)."""


def _on_budget(signum: int, frame: Any) -> None:
    raise StepTimeout("step CPU budget exceeded")


def install_budget() -> None:
    """Install the per-step CPU budget's handler. The sandbox runs this as a trusted
    setup hook, before its runtime policy starts refusing signal handlers."""
    signal.signal(signal.SIGVTALRM, _on_budget)


def _budget_ready() -> bool:
    if signal.getsignal(signal.SIGVTALRM) is _on_budget:
        return True
    try:
        install_budget()
    except (OSError, ValueError):  # handlers refused (or not the main thread)
        return False
    return True


def plain_value(value: Any, depth: int = 0) -> Any:
    """A JSON-plain rendering of ``value``: tuples become lists, sets sorted lists, other
    objects ``{"<object>": type name, "state": plain vars}``. Never calls ``__eq__``."""
    if depth > _MAX_DEPTH:
        return {"<deep>": True}
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"<float>": repr(value)}
    if kind is list or kind is tuple:
        return [plain_value(v, depth + 1) for v in value]
    if kind is dict:
        return {
            "<dict>": [
                [plain_value(k, depth + 1), plain_value(v, depth + 1)] for k, v in value.items()
            ]
        }
    if kind is set or kind is frozenset:
        items = [plain_value(v, depth + 1) for v in value]
        return {"<set>": sorted(items, key=repr)}
    if isinstance(value, BaseException):
        return {"<exception>": kind.__name__}
    state = getattr(value, "__dict__", None)
    out: dict[str, Any] = {"<object>": kind.__name__}
    if type(state) is dict:
        out["state"] = {
            str(k): plain_value(v, depth + 1)
            for k, v in sorted(state.items(), key=lambda kv: str(kv[0]))
        }
    return out


def _fresh(root: str) -> None:
    """Forget every module imported from the workspace, so the next import re-runs it."""
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(root + os.sep):
            del sys.modules[name]
    importlib.invalidate_caches()


def _resolve(target: str) -> Any:
    module_name, _, qualname = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _call(step: dict[str, Any], objects: list[Any], budget: bool) -> dict[str, Any]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if step.get("self") is not None:
                fn = getattr(objects[int(step["self"])], step["t"])
            else:
                fn = _resolve(step["t"])
            if budget:
                signal.setitimer(signal.ITIMER_VIRTUAL, STEP_CPU_S)
            try:
                value = fn(*step.get("a", []), **step.get("k", {}))
            finally:
                if budget:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        except StepTimeout:
            outcome: dict[str, Any] = {"e": "StepTimeout"}
        except Exception as exc:  # noqa: BLE001 - an exception is an outcome
            outcome = {"e": type(exc).__name__}
        else:
            if step.get("keep"):
                objects.append(value)
                outcome = {"v": {"<kept>": type(value).__name__}}
            else:
                outcome = {"v": plain_value(value)}
    categories = sorted({w.category.__name__ for w in caught})
    if categories:
        outcome["w"] = categories
    return outcome


def _preimport(steps: list[dict[str, Any]]) -> None:
    """Import the modules the steps name before the first step, warnings discarded:
    what importing emits (e.g. a compile-time ``DeprecationWarning`` for an invalid
    escape) belongs to no call, and would otherwise land on whichever step imports
    first -- a step whose position differs between the original's run and the
    candidate's. An import that fails is left to the step (its outcome)."""
    for step in steps:
        target = step.get("t")
        if step.get("self") is not None or not isinstance(target, str) or ":" not in target:
            continue
        # BaseException: an import that exits or fails in any way is the step's outcome.
        with warnings.catch_warnings(), contextlib.suppress(BaseException):
            warnings.simplefilter("ignore")
            importlib.import_module(target.partition(":")[0])


def run_checks(sequences: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Run each sequence of steps from a fresh import; return the outcomes.

    Each step may use :data:`STEP_CPU_S` of CPU (``{"e": "StepTimeout"}`` beyond it);
    after a few slow steps the rest read ``{"e": "Skipped"}``.

    A step is ``{"t": "module:qualname" | method name, "a": args, "k": kwargs,
    "self": index of a kept object or None, "keep": bool}``; ``keep`` stores the returned
    object (an instance) for later ``self`` steps.
    """
    root = os.getcwd()
    budget = _budget_ready()
    results: list[list[dict[str, Any]]] = []
    timeouts = 0
    for steps in sequences:
        _fresh(root)
        _preimport(steps)
        objects: list[Any] = []
        row: list[dict[str, Any]] = []
        for step in steps:
            if timeouts >= _MAX_TIMEOUTS:
                row.append({"e": "Skipped"})
                continue
            outcome = _call(step, objects, budget)
            timeouts += outcome.get("e") == "StepTimeout"
            row.append(outcome)
        results.append(row)
    _fresh(root)
    return results
